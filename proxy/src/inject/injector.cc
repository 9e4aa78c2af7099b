// SPDX-License-Identifier: Apache-2.0
// inject/injector.cc: an Aho-Corasick automaton over the patterns (sentinels or real values)
// and the streaming rewriter on it.
#include "inject/injector.h"

#include <algorithm>
#include <cstddef>
#include <deque>

namespace srt::proxy::inject {

// A trie with failure links (Aho & Corasick 1975). Children are kept sorted per node, so memory
// is linear in the patterns' total length.
class Automaton {
 public:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> next;  // sorted by byte
    int32_t fail = 0;
    int32_t depth = 0;
    int32_t pattern = -1;  // a pattern ending here (the longest one whose suffix this is)
  };
  struct Pattern {
    std::string from;
    std::string to;
  };

  explicit Automaton(std::vector<Pattern> patterns) : patterns_(std::move(patterns)) {
    nodes_.emplace_back();
    for (size_t i = 0; i < patterns_.size(); ++i) {
      int32_t s = 0;
      for (char c : patterns_[i].from) {
        const auto b = static_cast<unsigned char>(c);
        int32_t t = Child(s, b);
        if (t < 0) {
          t = static_cast<int32_t>(nodes_.size());
          Node n;
          n.depth = nodes_[static_cast<size_t>(s)].depth + 1;
          nodes_.push_back(std::move(n));
          auto& next = nodes_[static_cast<size_t>(s)].next;
          next.insert(std::lower_bound(next.begin(), next.end(), std::make_pair(b, int32_t{-1})),
                      {b, t});
        }
        s = t;
      }
      if (nodes_[static_cast<size_t>(s)].pattern < 0) {
        nodes_[static_cast<size_t>(s)].pattern = static_cast<int32_t>(i);
      }
      max_length_ = std::max(max_length_, patterns_[i].from.size());
    }
    // Breadth first: a node's failure link is the longest proper suffix that is in the trie;
    // a node with no pattern of its own inherits its failure link's (the output link, kept
    // flat since after a match the scan restarts anyway).
    std::deque<int32_t> queue;
    for (const auto& [b, t] : nodes_[0].next) queue.push_back(t);
    while (!queue.empty()) {
      const int32_t s = queue.front();
      queue.pop_front();
      for (const auto& [b, t] : nodes_[static_cast<size_t>(s)].next) {
        int32_t f = nodes_[static_cast<size_t>(s)].fail;
        while (f > 0 && Child(f, b) < 0) f = nodes_[static_cast<size_t>(f)].fail;
        const int32_t ft = Child(f, b);
        nodes_[static_cast<size_t>(t)].fail = (ft >= 0 && ft != t) ? ft : 0;
        if (nodes_[static_cast<size_t>(t)].pattern < 0) {
          nodes_[static_cast<size_t>(t)].pattern =
              nodes_[static_cast<size_t>(nodes_[static_cast<size_t>(t)].fail)].pattern;
        }
        queue.push_back(t);
      }
    }
  }

  int32_t Child(int32_t s, unsigned char b) const {
    const auto& next = nodes_[static_cast<size_t>(s)].next;
    auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(b, int32_t{-1}));
    return (it != next.end() && it->first == b) ? it->second : -1;
  }
  int32_t Step(int32_t s, unsigned char b) const {
    for (;;) {
      const int32_t t = Child(s, b);
      if (t >= 0) return t;
      if (s == 0) return 0;
      s = nodes_[static_cast<size_t>(s)].fail;
    }
  }
  const Node& node(int32_t s) const { return nodes_[static_cast<size_t>(s)]; }
  const Pattern& pattern(int32_t i) const { return patterns_[static_cast<size_t>(i)]; }
  size_t size() const { return patterns_.size(); }
  size_t max_length() const { return max_length_; }

 private:
  std::vector<Pattern> patterns_;
  std::vector<Node> nodes_;
  size_t max_length_ = 0;
};

Rewriter::Rewriter(std::shared_ptr<const Automaton> automaton, std::vector<bool> active)
    : automaton_(std::move(automaton)),
      active_(std::move(active)),
      replaced_(active_.size()),
      kept_(active_.size()) {}

void Rewriter::Feed(std::string_view in, std::string& out) {
  const Automaton& a = *automaton_;
  if (a.size() == 0) {
    out.append(in);
    return;
  }
  // held_[held_start_..] is exactly the bytes the current state spells (its depth): a pattern's
  // possible start. Bytes leave from the front by moving held_start_ (an erase per byte would
  // cost the depth, up to a pattern's length, for every byte of the stream).
  for (char c : in) {
    state_ = a.Step(state_, static_cast<unsigned char>(c));
    held_ += c;
    const Automaton::Node& n = a.node(state_);
    if (n.pattern >= 0) {
      const auto index = static_cast<size_t>(n.pattern);
      const Automaton::Pattern& p = a.pattern(n.pattern);
      // Everything before the match goes out as it is, then the match (swapped or kept).
      out.append(held_, held_start_, held_.size() - held_start_ - p.from.size());
      if (active_[index]) {
        out += p.to;
        ++replaced_[index];
      } else {
        out += p.from;
        ++kept_[index];
      }
      held_.clear();
      held_start_ = 0;
      state_ = 0;
      continue;
    }
    // Bytes older than the state's depth can start no pattern any more.
    const auto depth = static_cast<size_t>(n.depth);
    const size_t now = held_.size() - held_start_;
    if (now > depth) {
      out.append(held_, held_start_, now - depth);
      held_start_ += now - depth;
      if (held_start_ >= 4096 && held_start_ * 2 >= held_.size()) {
        held_.erase(0, held_start_);
        held_start_ = 0;
      }
    }
  }
}

void Rewriter::Finish(std::string& out) {
  out.append(held_, held_start_);
  held_.clear();
  held_start_ = 0;
  state_ = 0;
}

std::string Rewriter::Rewrite(std::string_view whole) {
  std::string out;
  Feed(whole, out);
  Finish(out);
  return out;
}

std::vector<Use> Rewriter::uses() const {
  std::vector<Use> out;
  for (size_t i = 0; i < active_.size(); ++i) {
    if (replaced_[i] == 0 && kept_[i] == 0) continue;
    out.push_back({names_[i], replaced_[i], kept_[i]});
  }
  return out;
}

FramedRewriter::FramedRewriter(std::unique_ptr<Rewriter> payload) : payload_(std::move(payload)) {}

void FramedRewriter::Feed(std::string_view in, const std::vector<std::pair<size_t, size_t>>& data,
                          std::string& out) {
  const size_t base = pending_.size();
  pending_.append(in);
  std::string rewritten;
  for (const auto& [begin, end] : data) {
    for (size_t i = begin; i < end; ++i) payload_at_.push_back(base + i);
    payload_->Feed(in.substr(begin, end - begin), rewritten);
  }
  // The rewriter is length-preserving: its output so far stands for the first payload bytes
  // still unresolved, in order.
  for (char c : rewritten) {
    if (resolved_ < payload_at_.size()) pending_[payload_at_[resolved_++]] = c;
  }
  Emit(out);
}

void FramedRewriter::Finish(std::string& out) {
  std::string rest;
  payload_->Finish(rest);
  for (char c : rest) {
    if (resolved_ < payload_at_.size()) pending_[payload_at_[resolved_++]] = c;
  }
  Emit(out);
  out += pending_;
  pending_.clear();
  payload_at_.clear();
  resolved_ = 0;
}

void FramedRewriter::Emit(std::string& out) {
  // Everything before the first unresolved payload byte is final.
  const size_t ready = resolved_ < payload_at_.size() ? payload_at_[resolved_] : pending_.size();
  out.append(pending_, 0, ready);
  pending_.erase(0, ready);
  payload_at_.erase(payload_at_.begin(),
                    payload_at_.begin() + static_cast<std::ptrdiff_t>(resolved_));
  resolved_ = 0;
  for (size_t& at : payload_at_) at -= ready;
}

bool HostMatches(const Host& host, const std::vector<DomainPattern>& patterns) {
  for (const DomainPattern& p : patterns) {
    switch (p.kind) {
      case DomainPattern::Kind::kAny:
        return true;
      case DomainPattern::Kind::kWildcard:
        if (host.kind == Host::Kind::kName && host.text.size() > p.host.size() &&
            host.text.ends_with(p.host) && host.text[host.text.size() - p.host.size() - 1] == '.') {
          return true;
        }
        break;
      case DomainPattern::Kind::kExact:
        if (host.kind == Host::Kind::kName && host.text == p.host) return true;
        break;
      case DomainPattern::Kind::kIpv4:
      case DomainPattern::Kind::kIpv6: {
        // Through the request canonicaliser, so both sides agree on an address's spelling.
        Result<Host> canonical =
            CanonicalizeHost(p.kind == DomainPattern::Kind::kIpv6 ? "[" + p.host + "]" : p.host);
        if (canonical && canonical->text == host.text && canonical->kind == host.kind) return true;
        break;
      }
    }
  }
  return false;
}

std::shared_ptr<const Injector> Injector::Build(const std::vector<CredentialSecret>& secrets) {
  auto injector = std::shared_ptr<Injector>(new Injector());
  std::vector<Automaton::Pattern> to_real;
  std::vector<Automaton::Pattern> to_sentinel;
  for (const CredentialSecret& s : secrets) {
    if (s.sentinel.empty() || s.real.empty() || s.sentinel == s.real) continue;
    injector->secrets_.push_back(s);
    injector->hosts_.push_back(s.inject_hosts);
    to_real.push_back({s.sentinel, s.real});
    to_sentinel.push_back({s.real, s.sentinel});
  }
  injector->requests_ = std::make_shared<Automaton>(std::move(to_real));
  injector->responses_ = std::make_shared<Automaton>(std::move(to_sentinel));
  return injector;
}

std::unique_ptr<Rewriter> Injector::ForRequest(const Host& host, RequestOptions options) const {
  std::vector<bool> active(secrets_.size());
  for (size_t i = 0; i < secrets_.size(); ++i) {
    const bool same_length = secrets_[i].real.size() == secrets_[i].sentinel.size();
    active[i] = HostMatches(host, hosts_[i]) && (same_length || !options.fixed_length);
  }
  auto r = std::make_unique<Rewriter>(requests_, std::move(active));
  r->names_ = Names();
  return r;
}

std::unique_ptr<Rewriter> Injector::ForResponse(bool fixed_length) const {
  std::vector<bool> active(secrets_.size());
  for (size_t i = 0; i < secrets_.size(); ++i) {
    active[i] = !fixed_length || secrets_[i].real.size() == secrets_[i].sentinel.size();
  }
  auto r = std::make_unique<Rewriter>(responses_, std::move(active));
  r->names_ = Names();
  return r;
}

std::vector<std::string> Injector::Names() const {
  std::vector<std::string> names;
  for (const CredentialSecret& s : secrets_) names.push_back(s.name);
  return names;
}

size_t Injector::max_pattern_length() const {
  return std::max(requests_->max_length(), responses_->max_length());
}

}  // namespace srt::proxy::inject
