// SPDX-License-Identifier: Apache-2.0
// The frames between `srt --attach` and `srt --serve`.
#include "attach_protocol.h"

#include <cstring>

#include "init_protocol/exec_plan.h"
#include "init_protocol/wire.h"

namespace srt::cli {

namespace {

Error Bad(const std::string& what) {
  return Error(Errc::kProtocol, "malformed attach frame: " + what);
}

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>((v >> (8 * i)) & 0xff));
}

uint32_t U32At(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 |
         static_cast<uint32_t>(b[at + 2]) << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

void PutRecord(std::string& out, uint16_t tag, const std::string& s) {
  auto put = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(tag);
  put(static_cast<uint32_t>(s.size() + 1));
  out += s;
  out += '\0';
}

}  // namespace

Result<AttachFrame> ParseAttachFrame(std::span<const uint8_t> bytes, bool from_client) {
  if (bytes.size() < 4) return Bad("shorter than its type");
  if (bytes.size() > kMaxAttachFrameBytes)
    return Bad("longer than " + std::to_string(kMaxAttachFrameBytes) + " bytes");
  AttachFrame f;
  f.type = U32At(bytes, 0);
  const size_t payload = bytes.size() - 4;
  auto fixed = [&](size_t values) -> Result<void> {
    if (payload != values * 4) {
      return Bad("type " + std::to_string(f.type) + " with " + std::to_string(payload) +
                 " bytes of payload");
    }
    for (size_t i = 0; i < values; ++i) f.values[i] = static_cast<int32_t>(U32At(bytes, 4 + i * 4));
    return Ok();
  };
  if (from_client) {
    switch (f.type) {
      case kAttachRun:
        SRT_RETURN_IF_ERROR(fixed(1));
        if (static_cast<uint32_t>(f.values[0]) != kAttachVersion) {
          return Bad("version " + std::to_string(static_cast<uint32_t>(f.values[0])) +
                     " (this srt speaks " + std::to_string(kAttachVersion) + ")");
        }
        return f;
      case kAttachSignal:
        SRT_RETURN_IF_ERROR(fixed(1));
        if (f.values[0] < 1 || f.values[0] > 64) {
          return Bad("signal " + std::to_string(f.values[0]));
        }
        return f;
      default:
        break;
    }
  } else {
    switch (f.type) {
      case kAttachStarted:
        SRT_RETURN_IF_ERROR(fixed(0));
        return f;
      case kAttachExited:
        SRT_RETURN_IF_ERROR(fixed(4));
        if (f.values[0] < 0 || f.values[0] > 255 || f.values[1] < 0 || f.values[1] > 64 ||
            f.values[2] < 0 || f.values[2] > 4095 || f.values[3] < 0 || f.values[3] > 64) {
          return Bad("exit status out of range");
        }
        return f;
      case kAttachError:
        if (payload == 0) return Bad("an empty error");
        f.text.assign(reinterpret_cast<const char*>(bytes.data() + 4), payload);
        return f;
      default:
        break;
    }
  }
  return Bad("unknown type " + std::to_string(f.type));
}

std::vector<uint8_t> EncodeAttachFrame(const AttachFrame& frame) {
  std::vector<uint8_t> out;
  PutU32(out, frame.type);
  size_t values = 0;
  switch (frame.type) {
    case kAttachRun:
    case kAttachSignal:
      values = 1;
      break;
    case kAttachExited:
      values = 4;
      break;
    case kAttachError: {
      const size_t n = std::min(frame.text.size(), kMaxAttachFrameBytes - 4);
      out.insert(out.end(), frame.text.begin(), frame.text.begin() + static_cast<long>(n));
      break;
    }
    default:
      break;
  }
  for (size_t i = 0; i < values; ++i) PutU32(out, static_cast<uint32_t>(frame.values[i]));
  return out;
}

std::string EncodeAttachCommand(const AttachCommand& command) {
  std::string out;
  for (uint32_t v : {wire::kPlanMagic, wire::kPlanVersion}) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  for (const std::string& a : command.argv) PutRecord(out, wire::kTagArg, a);
  for (const std::string& e : command.env) PutRecord(out, wire::kTagEnv, e);
  PutRecord(out, wire::kTagCwd, command.cwd);
  return out;
}

Result<AttachCommand> DecodeAttachCommand(std::span<const uint8_t> plan) {
  wire::ExecPlan p;
  if (!wire::DecodeExecPlan(plan.data(), plan.size(), p)) {
    return Error(Errc::kProtocol, "malformed command plan from srt --attach");
  }
  if (p.terminal || p.reopen_count) {
    return Error(Errc::kProtocol, "the command plan from srt --attach names terminals or devices");
  }
  std::vector<const char*> argv(p.argc + 1), envp(p.envc + 1);
  p.argv = argv.data();
  p.envp = envp.data();
  if (!wire::DecodeExecPlan(plan.data(), plan.size(), p)) {
    return Error(Errc::kProtocol, "malformed command plan from srt --attach");
  }
  AttachCommand c;
  for (size_t i = 0; i < p.argc; ++i) c.argv.emplace_back(argv[i]);
  for (size_t i = 0; i < p.envc; ++i) c.env.emplace_back(envp[i]);
  c.cwd = p.cwd;
  return c;
}

}  // namespace srt::cli
