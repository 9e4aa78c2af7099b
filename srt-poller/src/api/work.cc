// SPDX-License-Identifier: Apache-2.0
// api/work.cc: JSON -> structs for the work-queue, session and skills objects.
#include "api/work.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace srt::poller {
namespace {

using json = nlohmann::json;

std::string Pointer(std::string_view parent, std::string_view key) {
  std::string p(parent);
  p.push_back('/');
  p.append(key);
  return p;
}

Error Bad(std::string_view what, std::string_view pointer, std::string_view message) {
  std::string m(what);
  m.append(": ");
  m.append(pointer.empty() ? "/" : pointer);
  m.append(": ");
  m.append(message);
  return MakeError(Errc::kProtocol, std::move(m));
}

const char* TypeName(const json& j) { return j.type_name(); }

// Refuses documents nested deeper than kMaxJsonDepth before nlohmann sees them: its dump() and
// destructor recurse, and a hostile server should not be able to exhaust our stack.
bool DepthOk(std::string_view text) { return strings::JsonNestingWithin(text, kMaxJsonDepth); }

Result<json> ParseJson(std::string_view what, std::string_view body) {
  if (!DepthOk(body)) {
    return MakeError(Errc::kProtocol, std::string(what) + ": JSON nested deeper than " +
                                          std::to_string(kMaxJsonDepth) + " levels");
  }
  json j = json::parse(body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions only to get nlohmann's position-bearing message.
    try {
      const json reparsed = json::parse(body);
      (void)reparsed;
    } catch (const json::exception& e) {
      return MakeError(Errc::kProtocol, std::string(what) + ": " + e.what());
    }
    return MakeError(Errc::kProtocol, std::string(what) + ": invalid JSON");
  }
  return j;
}

Result<const json*> RequireObject(std::string_view what, const json& j, std::string_view ptr) {
  if (!j.is_object()) {
    return Bad(what, ptr, std::string("expected an object, got ") + TypeName(j));
  }
  return &j;
}

// A string member; `required` makes absence (or null) an error, else it yields "".
Result<std::string> String(std::string_view what, const json& obj, std::string_view key,
                           std::string_view parent, bool required) {
  const std::string ptr = Pointer(parent, key);
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Bad(what, ptr, "missing");
    return std::string();
  }
  if (!it->is_string())
    return Bad(what, ptr, std::string("expected a string, got ") + TypeName(*it));
  return it->get<std::string>();
}

Result<std::string> Id(std::string_view what, const json& obj, std::string_view key,
                       std::string_view parent, bool required) {
  SRT_ASSIGN_OR_RETURN(std::string v, String(what, obj, key, parent, required));
  if (v.empty() && !required) return v;
  if (auto ok = ValidateId(Pointer(parent, key), v); !ok) {
    return MakeError(Errc::kInvalidArgument, std::string(what) + ": " + ok.error().message());
  }
  return v;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Result<std::optional<std::string>> NextPage(std::string_view what, const json& obj) {
  SRT_ASSIGN_OR_RETURN(std::string next, String(what, obj, "next_page", "", false));
  if (next.empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(next));
}

Result<Work> WorkFromJson(std::string_view body, const json& j) {
  constexpr std::string_view kWhat = "work";
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  Work w;
  SRT_ASSIGN_OR_RETURN(std::string type, String(kWhat, j, "type", "", false));
  if (!type.empty() && type != "work") {
    return Bad(kWhat, "/type", "expected 'work', got " + strings::QuoteForMessage(type));
  }
  SRT_ASSIGN_OR_RETURN(w.id, Id(kWhat, j, "id", "", true));
  SRT_ASSIGN_OR_RETURN(w.environment_id, Id(kWhat, j, "environment_id", "", false));
  auto data = j.find("data");
  if (data == j.end() || data->is_null()) return Bad(kWhat, "/data", "missing");
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, *data, "/data"));
  SRT_ASSIGN_OR_RETURN(w.data_type, String(kWhat, *data, "type", "/data", true));
  if (w.is_session()) {
    SRT_ASSIGN_OR_RETURN(w.data_id, Id(kWhat, *data, "id", "/data", true));
  } else {
    SRT_ASSIGN_OR_RETURN(w.data_id, String(kWhat, *data, "id", "/data", false));
  }
  SRT_ASSIGN_OR_RETURN(w.state, String(kWhat, j, "state", "", false));
  SRT_ASSIGN_OR_RETURN(w.created_at, String(kWhat, j, "created_at", "", false));
  SRT_ASSIGN_OR_RETURN(std::string secret, String(kWhat, j, "secret", "", false));
  if (!secret.empty()) w.secret = std::move(secret);
  if (auto md = j.find("metadata"); md != j.end() && !md->is_null()) {
    if (!md->is_object()) {
      return Bad(kWhat, "/metadata", std::string("expected an object, got ") + TypeName(*md));
    }
    for (auto it = md->begin(); it != md->end(); ++it) {
      if (it->is_string()) w.metadata.emplace(it.key(), it->get<std::string>());
    }
  }
  w.raw_json = std::string(body);
  return w;
}

Result<SessionEvent> EventFromJson(const json& j, std::string_view parent) {
  constexpr std::string_view kWhat = "session event";
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, parent));
  SessionEvent ev;
  SRT_ASSIGN_OR_RETURN(ev.type, String(kWhat, j, "type", parent, true));
  ev.kind = EventKindFromType(ev.type);
  const bool tool_use =
      ev.kind == EventKind::kAgentToolUse || ev.kind == EventKind::kAgentCustomToolUse;
  SRT_ASSIGN_OR_RETURN(ev.id, String(kWhat, j, "id", parent, tool_use));
  if (tool_use && ev.id.empty()) return Bad(kWhat, Pointer(parent, "id"), "empty");
  SRT_ASSIGN_OR_RETURN(ev.processed_at, String(kWhat, j, "processed_at", parent, false));
  switch (ev.kind) {
    case EventKind::kAgentToolUse:
    case EventKind::kAgentCustomToolUse: {
      SRT_ASSIGN_OR_RETURN(ev.name, String(kWhat, j, "name", parent, true));
      auto input = j.find("input");
      if (input == j.end() || input->is_null()) {
        ev.input_json = "{}";
      } else if (!input->is_object()) {
        return Bad(kWhat, Pointer(parent, "input"),
                   std::string("expected an object, got ") + TypeName(*input));
      } else {
        ev.input_json = Dump(*input);
      }
      if (ev.kind == EventKind::kAgentToolUse) {
        SRT_ASSIGN_OR_RETURN(ev.evaluated_permission,
                             String(kWhat, j, "evaluated_permission", parent, false));
      }
      SRT_ASSIGN_OR_RETURN(ev.session_thread_id,
                           String(kWhat, j, "session_thread_id", parent, false));
      break;
    }
    case EventKind::kUserToolConfirmation: {
      SRT_ASSIGN_OR_RETURN(ev.tool_use_id, String(kWhat, j, "tool_use_id", parent, true));
      SRT_ASSIGN_OR_RETURN(ev.result, String(kWhat, j, "result", parent, true));
      SRT_ASSIGN_OR_RETURN(ev.session_thread_id,
                           String(kWhat, j, "session_thread_id", parent, false));
      break;
    }
    case EventKind::kUserToolResult: {
      SRT_ASSIGN_OR_RETURN(ev.tool_use_id, String(kWhat, j, "tool_use_id", parent, true));
      break;
    }
    case EventKind::kUserCustomToolResult: {
      SRT_ASSIGN_OR_RETURN(ev.custom_tool_use_id,
                           String(kWhat, j, "custom_tool_use_id", parent, true));
      break;
    }
    case EventKind::kSessionStatusIdle: {
      auto sr = j.find("stop_reason");
      if (sr != j.end() && !sr->is_null()) {
        const std::string ptr = Pointer(parent, "stop_reason");
        SRT_RETURN_IF_ERROR(RequireObject(kWhat, *sr, ptr));
        SRT_ASSIGN_OR_RETURN(ev.stop_reason, String(kWhat, *sr, "type", ptr, true));
        if (auto ids = sr->find("event_ids"); ids != sr->end() && !ids->is_null()) {
          if (!ids->is_array()) {
            return Bad(kWhat, Pointer(ptr, "event_ids"),
                       std::string("expected an array, got ") + TypeName(*ids));
          }
          for (size_t i = 0; i < ids->size(); ++i) {
            const json& id = (*ids)[i];
            if (!id.is_string()) {
              return Bad(kWhat, Pointer(Pointer(ptr, "event_ids"), std::to_string(i)),
                         std::string("expected a string, got ") + TypeName(id));
            }
            ev.stop_event_ids.push_back(id.get<std::string>());
          }
        }
      }
      break;
    }
    case EventKind::kSessionStatusTerminated:
    case EventKind::kSessionDeleted:
    case EventKind::kUnknown:
      break;
  }
  return ev;
}

Result<SkillVersion> SkillVersionFromJson(const json& j, std::string_view parent) {
  constexpr std::string_view kWhat = "skill version";
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, parent));
  SkillVersion v;
  SRT_ASSIGN_OR_RETURN(v.skill_id, Id(kWhat, j, "skill_id", parent, false));
  SRT_ASSIGN_OR_RETURN(v.version, Id(kWhat, j, "version", parent, true));
  SRT_ASSIGN_OR_RETURN(v.name, String(kWhat, j, "name", parent, false));
  SRT_ASSIGN_OR_RETURN(v.directory, String(kWhat, j, "directory", parent, false));
  SRT_ASSIGN_OR_RETURN(v.description, String(kWhat, j, "description", parent, false));
  SRT_ASSIGN_OR_RETURN(v.created_at, String(kWhat, j, "created_at", parent, false));
  return v;
}

Result<Memory> MemoryFromJson(const json& j, std::string_view parent) {
  constexpr std::string_view kWhat = "memory";
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, parent));
  Memory m;
  SRT_ASSIGN_OR_RETURN(m.id, Id(kWhat, j, "id", parent, true));
  SRT_ASSIGN_OR_RETURN(m.path, String(kWhat, j, "path", parent, true));
  SRT_ASSIGN_OR_RETURN(m.content_sha256, String(kWhat, j, "content_sha256", parent, true));
  if (auto c = j.find("content"); c != j.end() && !c->is_null()) {
    SRT_ASSIGN_OR_RETURN(m.content, String(kWhat, j, "content", parent, true));
  }
  return m;
}

// A `{"data": [...], "next_page": ...}` list; `item` parses one element of `data`.
template <typename Page, typename ItemFromJson>
Result<Page> ParsePage(std::string_view what, std::string_view body, ItemFromJson item) {
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(what, body));
  SRT_RETURN_IF_ERROR(RequireObject(what, j, ""));
  Page page;
  auto data = j.find("data");
  if (data == j.end() || !data->is_array()) return Bad(what, "/data", "expected an array");
  for (size_t i = 0; i < data->size(); ++i) {
    auto v = item((*data)[i], "/data/" + std::to_string(i));
    if (!v) return std::move(v).error().Wrap(what);
    page.data.push_back(std::move(v).value());
  }
  SRT_ASSIGN_OR_RETURN(page.next_page, NextPage(what, j));
  return page;
}

bool PrintableToken(std::string_view s) {
  for (char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

}  // namespace

Result<void> ValidateId(std::string_view what, std::string_view id) {
  bool ok = !id.empty() && id.size() <= kMaxIdLength;
  for (char c : id) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-');
  }
  if (ok) return Ok();
  return MakeError(Errc::kInvalidArgument,
                   std::string(what) + ": " + strings::QuoteForMessage(id) +
                       " is not a safe id (allowed: A-Z a-z 0-9 _ -, 1 to 128 characters)");
}

Result<Work> ParseWork(std::string_view body) {
  SRT_ASSIGN_OR_RETURN(json j, ParseJson("work", body));
  return WorkFromJson(body, j);
}

Result<std::optional<Work>> ParsePollResponse(int status, std::string_view body) {
  if (status == 204) return std::optional<Work>();
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::optional<Work>();
  SRT_ASSIGN_OR_RETURN(json j, ParseJson("work", body));
  if (j.is_null()) return std::optional<Work>();
  // Go SDK parity: `work == nil || work.ID == ""` is an empty queue.
  if (j.is_object()) {
    auto id = j.find("id");
    if (id == j.end() || id->is_null() ||
        (id->is_string() && id->get_ref<const std::string&>().empty())) {
      return std::optional<Work>();
    }
  }
  SRT_ASSIGN_OR_RETURN(Work w, WorkFromJson(body, j));
  return std::optional<Work>(std::move(w));
}

Result<std::string> DecodeBase64Url(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '-' || c == '+')
      v = 62;
    else if (c == '_' || c == '/')
      v = 63;
    else if (c == '=')
      break;
    if (v < 0) {
      return MakeError(Errc::kProtocol, "base64: invalid character " +
                                            strings::QuoteForMessage(text.substr(i, 1)) +
                                            " at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  const size_t data_len = i;
  // Only '=' may follow, and only as much as completes a 4-character group.
  for (; i < text.size(); ++i) {
    if (text[i] != '=') {
      return MakeError(Errc::kProtocol,
                       "base64: data after padding at offset " + std::to_string(i));
    }
  }
  if (data_len % 4 == 1) return MakeError(Errc::kProtocol, "base64: truncated input");
  if (text.size() != data_len && text.size() % 4 != 0) {
    return MakeError(Errc::kProtocol, "base64: wrong padding");
  }
  return out;
}

Result<WorkSecret> DecodeWorkSecret(std::string_view secret) {
  constexpr std::string_view kWhat = "work secret";
  while (!secret.empty() &&
         (secret.back() == '\n' || secret.back() == '\r' || secret.back() == ' ')) {
    secret.remove_suffix(1);
  }
  auto decoded = DecodeBase64Url(secret);
  if (!decoded) return std::move(decoded).error().Wrap(kWhat);
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(kWhat, *decoded));
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  WorkSecret s;
  SRT_ASSIGN_OR_RETURN(s.sessions_token, String(kWhat, j, "sessions_token", "", true));
  // Never quote the token itself in an error: it is a credential.
  if (s.sessions_token.empty()) return Bad(kWhat, "/sessions_token", "empty");
  if (!PrintableToken(s.sessions_token)) {
    return Bad(kWhat, "/sessions_token", "contains spaces, control or non-ASCII characters");
  }
  SRT_ASSIGN_OR_RETURN(std::string base, String(kWhat, j, "api_base_url", "", false));
  if (!base.empty()) {
    if (!PrintableToken(base) || !(base.starts_with("https://") || base.starts_with("http://"))) {
      return Bad(kWhat, "/api_base_url", strings::QuoteForMessage(base) + " is not an http(s) URL");
    }
    s.api_base_url = std::move(base);
  }
  return s;
}

Result<HeartbeatResponse> ParseHeartbeatResponse(std::string_view body) {
  constexpr std::string_view kWhat = "heartbeat response";
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(kWhat, body));
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  HeartbeatResponse h;
  SRT_ASSIGN_OR_RETURN(h.last_heartbeat, String(kWhat, j, "last_heartbeat", "", true));
  SRT_ASSIGN_OR_RETURN(h.state, String(kWhat, j, "state", "", false));
  auto le = j.find("lease_extended");
  if (le == j.end() || le->is_null()) return Bad(kWhat, "/lease_extended", "missing");
  if (!le->is_boolean()) {
    return Bad(kWhat, "/lease_extended", std::string("expected a boolean, got ") + TypeName(*le));
  }
  h.lease_extended = le->get<bool>();
  if (auto ttl = j.find("ttl_seconds"); ttl != j.end() && !ttl->is_null()) {
    if (!ttl->is_number_integer() || ttl->get<int64_t>() < 0) {
      return Bad(kWhat, "/ttl_seconds", "expected a non-negative integer, got " + Dump(*ttl));
    }
    h.ttl_seconds = ttl->get<int64_t>();
  }
  return h;
}

Result<QueueStats> ParseQueueStats(std::string_view body) {
  constexpr std::string_view kWhat = "queue stats";
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(kWhat, body));
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  QueueStats q;
  for (auto [key, field] : {std::pair{"depth", &q.depth}, std::pair{"pending", &q.pending},
                            std::pair{"workers_polling", &q.workers_polling}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;  // absent: not known, left 0
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Bad(kWhat, std::string("/") + key,
                 "expected a non-negative integer, got " + Dump(*it));
    }
    *field = it->get<int64_t>();
  }
  return q;
}

EventKind EventKindFromType(std::string_view type) {
  if (type == "agent.tool_use") return EventKind::kAgentToolUse;
  if (type == "agent.custom_tool_use") return EventKind::kAgentCustomToolUse;
  if (type == "user.tool_confirmation") return EventKind::kUserToolConfirmation;
  if (type == "user.tool_result") return EventKind::kUserToolResult;
  if (type == "user.custom_tool_result") return EventKind::kUserCustomToolResult;
  if (type == "session.status_idle") return EventKind::kSessionStatusIdle;
  if (type == "session.status_terminated") return EventKind::kSessionStatusTerminated;
  if (type == "session.deleted") return EventKind::kSessionDeleted;
  return EventKind::kUnknown;
}

Result<SessionEvent> ParseSessionEvent(std::string_view text) {
  SRT_ASSIGN_OR_RETURN(json j, ParseJson("session event", text));
  return EventFromJson(j, "");
}

Result<EventPage> ParseEventPage(std::string_view body) {
  return ParsePage<EventPage>("event list", body, EventFromJson);
}

Result<Session> ParseSession(std::string_view body) {
  constexpr std::string_view kWhat = "session";
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(kWhat, body));
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  Session s;
  SRT_ASSIGN_OR_RETURN(s.id, Id(kWhat, j, "id", "", true));
  if (auto agent = j.find("agent"); agent != j.end() && !agent->is_null()) {
    SRT_RETURN_IF_ERROR(RequireObject(kWhat, *agent, "/agent"));
    if (auto skills = agent->find("skills"); skills != agent->end() && !skills->is_null()) {
      if (!skills->is_array()) return Bad(kWhat, "/agent/skills", "expected an array");
      for (size_t i = 0; i < skills->size(); ++i) {
        const std::string ptr = "/agent/skills/" + std::to_string(i);
        const json& sk = (*skills)[i];
        SRT_RETURN_IF_ERROR(RequireObject(kWhat, sk, ptr));
        SkillRef ref;
        SRT_ASSIGN_OR_RETURN(ref.skill_id, Id(kWhat, sk, "skill_id", ptr, true));
        SRT_ASSIGN_OR_RETURN(ref.version, Id(kWhat, sk, "version", ptr, false));
        SRT_ASSIGN_OR_RETURN(ref.type, String(kWhat, sk, "type", ptr, false));
        s.skills.push_back(std::move(ref));
      }
    }
  }
  if (auto res = j.find("resources"); res != j.end() && !res->is_null()) {
    if (!res->is_array()) return Bad(kWhat, "/resources", "expected an array");
    for (size_t i = 0; i < res->size(); ++i) {
      const std::string ptr = "/resources/" + std::to_string(i);
      const json& r = (*res)[i];
      SRT_RETURN_IF_ERROR(RequireObject(kWhat, r, ptr));
      SRT_ASSIGN_OR_RETURN(std::string type, String(kWhat, r, "type", ptr, true));
      if (type != "memory_store") continue;  // files and repositories are refused upstream
      MemoryStoreRef m;
      SRT_ASSIGN_OR_RETURN(m.memory_store_id, Id(kWhat, r, "memory_store_id", ptr, true));
      SRT_ASSIGN_OR_RETURN(std::string access, String(kWhat, r, "access", ptr, false));
      if (!access.empty() && access != "read_write" && access != "read_only") {
        return Bad(kWhat, Pointer(ptr, "access"),
                   "expected read_write or read_only, got " + strings::QuoteForMessage(access));
      }
      m.read_only = access == "read_only";
      SRT_ASSIGN_OR_RETURN(m.mount_path, String(kWhat, r, "mount_path", ptr, false));
      SRT_ASSIGN_OR_RETURN(m.name, String(kWhat, r, "name", ptr, false));
      s.memory_stores.push_back(std::move(m));
    }
  }
  auto md = j.find("metadata");
  s.metadata_json = (md == j.end() || md->is_null()) ? "{}" : Dump(*md);
  s.raw_json = std::string(body);
  return s;
}

Result<Memory> ParseMemory(std::string_view body) {
  SRT_ASSIGN_OR_RETURN(json j, ParseJson("memory", body));
  return MemoryFromJson(j, "");
}

Result<MemoryPage> ParseMemoryPage(std::string_view body) {
  constexpr std::string_view kWhat = "memory list";
  SRT_ASSIGN_OR_RETURN(json j, ParseJson(kWhat, body));
  SRT_RETURN_IF_ERROR(RequireObject(kWhat, j, ""));
  // A listing with `depth` rolls deeper entries up into `memory_prefix` items; we never ask
  // for one, and skip them should they come.
  auto data = j.find("data");
  if (data == j.end() || !data->is_array()) return Bad(kWhat, "/data", "expected an array");
  MemoryPage page;
  for (size_t i = 0; i < data->size(); ++i) {
    const std::string ptr = "/data/" + std::to_string(i);
    const json& item = (*data)[i];
    SRT_RETURN_IF_ERROR(RequireObject(kWhat, item, ptr));
    SRT_ASSIGN_OR_RETURN(std::string type, String(kWhat, item, "type", ptr, false));
    if (type == "memory_prefix") continue;
    auto m = MemoryFromJson(item, ptr);
    if (!m) return std::move(m).error().Wrap(kWhat);
    page.data.push_back(std::move(m).value());
  }
  SRT_ASSIGN_OR_RETURN(page.next_page, NextPage(kWhat, j));
  return page;
}

Result<SkillVersion> ParseSkillVersion(std::string_view body) {
  SRT_ASSIGN_OR_RETURN(json j, ParseJson("skill version", body));
  return SkillVersionFromJson(j, "");
}

Result<SkillVersionPage> ParseSkillVersionPage(std::string_view body) {
  return ParsePage<SkillVersionPage>("skill version list", body, SkillVersionFromJson);
}

std::optional<std::string> ParseApiErrorMessage(std::string_view body) {
  if (body.empty() || body.size() > (size_t{1} << 20) || !DepthOk(body)) return std::nullopt;
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto err = j.find("error");
  if (err == j.end() || !err->is_object()) return std::nullopt;
  auto msg = err->find("message");
  if (msg == err->end() || !msg->is_string()) return std::nullopt;
  std::string out;
  if (auto t = err->find("type"); t != err->end() && t->is_string()) {
    out = t->get<std::string>() + ": ";
  }
  out += msg->get<std::string>();
  std::string clean;
  for (char c : out) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) clean.push_back(c);
    if (clean.size() >= 512) break;
  }
  return clean;
}

std::string TextContent(std::string_view text) {
  json block = {{"type", "text"}, {"text", std::string(text)}};
  return Dump(json::array({block}));
}

Result<std::string> EncodeEventsBody(const std::vector<PostedToolResult>& results) {
  json events = json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const PostedToolResult& r = results[i];
    const std::string ptr = "/events/" + std::to_string(i);
    if (r.tool_use_id.empty()) return Bad("events body", ptr, "empty tool_use_id");
    json content = json::array();
    if (!r.content_json.empty()) {
      SRT_ASSIGN_OR_RETURN(content, ParseJson("events body", r.content_json));
      if (!content.is_array()) {
        return Bad("events body", ptr + "/content", "expected a JSON array of content blocks");
      }
    }
    json ev;
    if (r.kind == ResultKind::kToolResult) {
      ev = {{"type", "user.tool_result"}, {"tool_use_id", r.tool_use_id}};
    } else {
      ev = {{"type", "user.custom_tool_result"}, {"custom_tool_use_id", r.tool_use_id}};
    }
    ev["is_error"] = r.is_error;
    ev["content"] = std::move(content);
    events.push_back(std::move(ev));
  }
  return Dump(json{{"events", std::move(events)}});
}

std::string EncodeMemoryWrite(std::optional<std::string_view> path, std::string_view content,
                              std::optional<std::string_view> expected_sha256) {
  json body = json::object();
  if (path) body["path"] = std::string(*path);
  body["content"] = std::string(content);
  if (expected_sha256) {
    body["precondition"] = {{"type", "content_sha256"},
                            {"content_sha256", std::string(*expected_sha256)}};
  }
  return Dump(body);
}

}  // namespace srt::poller
