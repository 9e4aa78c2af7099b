// SPDX-License-Identifier: Apache-2.0
// runner/memory_stores.h: a session's memory stores, as the newer official workers mount them
// (work-queue-protocol.md, addendum "Memory stores").
//
// Usage protocol (poller/session.cc): before the session's sandbox starts, MemoryMountPath()
// places each store in the sandbox and FetchMemoryStore() writes its memories into a directory
// of srt-poller's own, which the sandbox binds at that path (writable only for read_write).
// After the sandbox has ended, SyncMemoryStore() writes back what the agent changed there.
//
// The directory was the sandbox's to write, so what SyncMemoryStore() reads back is hostile:
// it is walked below a directory fd without following a symlink, and only regular files of at
// most kMemoryMaxBytes of UTF-8 text, at valid memory paths, at most kMaxMemories of them, are
// memories; symlinks, FIFOs, devices and everything past a limit are skipped (and counted).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "api/work.h"
#include "srt/result.h"

namespace srt::poller {

inline constexpr size_t kMaxMemories = 2000;         // a store's cap, the server's
inline constexpr size_t kMemoryMaxBytes = 102400;    // a memory's content, the server's
inline constexpr size_t kMemoryMaxPathBytes = 1024;  // a memory's path, the server's
inline constexpr char kMemoryMarkerFile[] = ".anthropic-memory-store";

// The memory endpoints of one store's session (the sessions token). A write that the server
// refuses because its version changed meanwhile (409) is kConflict: the server's version wins.
class MemoryApi {
 public:
  // kRefused: the server will not take this one (a 400: a path it does not accept, say); the
  // sync goes on without it.
  enum class Write { kDone, kConflict, kRefused };
  struct Written {
    Write outcome = Write::kDone;
    std::string id;   // kDone: the memory's id
    std::string why;  // kRefused: the server's message
  };
  virtual ~MemoryApi() = default;
  [[nodiscard]] virtual Result<std::vector<Memory>> List(const std::string& store_id) = 0;
  [[nodiscard]] virtual Result<Written> Create(const std::string& store_id, const std::string& path,
                                               const std::string& content) = 0;
  [[nodiscard]] virtual Result<Written> Update(const std::string& store_id, const std::string& id,
                                               const std::string& content,
                                               const std::string& expected_sha256) = 0;
  [[nodiscard]] virtual Result<Write> Delete(const std::string& store_id, const std::string& id,
                                             const std::string& expected_sha256) = 0;
};

// Where the store lands in the sandbox: its mount_path verbatim, which must be a clean
// absolute path (no empty, "." or ".." segments, no trailing '/', no control characters, not
// "/"), else <workdir>/memory/<name, or the id when the name is not one safe path segment>.
[[nodiscard]] Result<std::string> MemoryMountPath(const MemoryStoreRef& store,
                                                  const std::string& workdir);

// Whether `path` is a memory path the server accepts and that names a file below a store's
// directory: "/" then '/'-separated segments, none empty, "." or "..", none longer than 255
// bytes, at most kMemoryMaxPathBytes in all, no control characters; and not the marker file
// nor below a directory of its name.
[[nodiscard]] Result<void> ValidateMemoryPath(const std::string& path);

// Lowercase hex SHA-256 of `bytes` (the server's content_sha256).
std::string Sha256Hex(const std::string& bytes);

// What the store holds as far as this item knows: path -> the memory's id and content hash,
// from the fetch and every write since. Only these can be updated or deleted by a sync. An
// entry without an id is a path where the server's version won a conflict: left alone.
struct MemoryBaseline {
  struct Entry {
    std::string id;
    std::string sha256;
  };
  std::map<std::string, Entry> by_path;
  size_t fetched = 0;  // memories the fetch wrote: what the delete cap is of
};

struct FetchReport {
  MemoryBaseline baseline;
  size_t written = 0;
  std::vector<std::string> skipped;  // why a memory was not written (a bad path, a clash)
};

// Lists the store and writes each memory as a file (0644) at its path below `dir_fd`, an empty
// directory of ours, and the marker file "version 1\n<store id>". A memory whose path is not
// valid or clashes with another's (a file where another needs a directory) is skipped, named
// in the report, and left alone by the sync. Fails when the list fails or a file cannot be
// written: the store is then not mounted.
[[nodiscard]] Result<FetchReport> FetchMemoryStore(MemoryApi& api, const std::string& store_id,
                                                   int dir_fd);

// What a sync left alone, and why: the tree is the agent's, so only the first kFirst reasons
// are kept (each path quoted and cut), and how many there were in all.
struct SkipNotes {
  static constexpr size_t kFirst = 100;
  std::vector<std::string> first;
  size_t count = 0;
  void Add(std::string note);
};

struct SyncReport {
  size_t created = 0;
  size_t updated = 0;
  size_t deleted = 0;
  size_t conflicts = 0;      // the server's version kept
  SkipNotes skipped;         // files not written back; deletes past the cap
  bool out_of_time = false;  // the deadline came before every change was sent
  // The walk could not see the whole store (too many entries, a directory that would not
  // open): nothing was deleted.
  bool incomplete_walk = false;
};

// Deletes per sync, as the official workers bound them: max(8, min(50, n / 4)) of a store of
// n memories, so that a session cannot empty a large store at once.
size_t MemoryDeleteCap(size_t memories);

// kPeriodic: while the session runs (creates and updates only: a file missing for a moment,
// an editor's rm-and-write, is no delete). kFinal: once its sandbox has ended (deletes too).
enum class MemorySync { kPeriodic, kFinal };

// Writes back what differs between `dir_fd` and `baseline`, and brings `baseline` up to what
// it wrote: a new file is created, a changed one updated (on the condition that the server
// still has the version last seen), with kFinal a missing one deleted (likewise, at most
// MemoryDeleteCap() of what was fetched, and none when the walk could not see the whole tree).
// A failing call fails the sync (what was written before stays in `baseline`); a conflict or a
// memory the server refuses does not. Stops sending at `deadline`.
[[nodiscard]] Result<SyncReport> SyncMemoryStore(MemoryApi& api, const std::string& store_id,
                                                 int dir_fd, MemoryBaseline& baseline,
                                                 MemorySync mode,
                                                 std::chrono::steady_clock::time_point deadline);

}  // namespace srt::poller
