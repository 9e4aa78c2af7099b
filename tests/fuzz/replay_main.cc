// SPDX-License-Identifier: Apache-2.0
// Stand-alone driver for the fuzz targets (c-ares' ares-fuzz.c idea): replays files and
// directories of inputs through LLVMFuzzerTestOneInput without libFuzzer, so every build, GCC
// included, replays the committed corpora (ctest label fuzz-replay).
//
// Usage: <target>_replay PATH...   (a directory means every regular file in it, sorted by name)
// Exit status: 0 when every input ran; 1 on a usage or I/O problem or when no input was found.
// A property violation aborts or traps inside the target, as under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool ReadFile(const std::filesystem::path& p, std::vector<char>& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool Replay(const std::filesystem::path& p) {
  std::vector<char> bytes;
  if (!ReadFile(p, bytes)) {
    std::fprintf(stderr, "replay: cannot read '%s'\n", p.c_str());
    return false;
  }
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.c_str(), bytes.size());
  // An exactly-sized heap copy, as libFuzzer passes it, so that ASan sees any over-read.
  std::unique_ptr<uint8_t[]> data(new uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), data.get());
  LLVMFuzzerTestOneInput(data.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 1;
  }
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg = argv[i];
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      if (!Replay(arg)) return 1;
      ++replayed;
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "replay: cannot list '%s': %s\n", arg.c_str(), ec.message().c_str());
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (!Replay(f)) return 1;
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 1;
  }
  std::fprintf(stderr, "replay: %zu inputs, no property violated\n", replayed);
  return 0;
}
