// SPDX-License-Identifier: Apache-2.0
// inject/exchange.cc: the rewriters of one exchange and their totals.
#include "inject/exchange.h"

namespace srt::proxy::inject {

Exchange::Exchange(const Injector& injector, const Host& host)
    : request_head_(injector.ForRequest(host)),
      request_body_(injector.ForRequest(host, {.fixed_length = true})),
      request_chunked_(injector.ForRequest(host, {.fixed_length = true})),
      response_head_(injector.ForResponse(/*fixed_length=*/false)),
      response_body_(injector.ForResponse(/*fixed_length=*/true)),
      response_chunked_(injector.ForResponse(/*fixed_length=*/true)) {}

std::string Exchange::RequestHeaderValue(std::string_view value) {
  return request_head_->Rewrite(value);
}

void Exchange::Body(Rewriter& plain, FramedRewriter& framed, std::string_view piece,
                    const DataSpans* data, bool last, std::string& out) {
  if (data != nullptr) {
    // Chunk data only, framing in place: a pattern split across chunks is still found.
    framed.Feed(piece, *data, out);
    if (last) framed.Finish(out);
    return;
  }
  plain.Feed(piece, out);
  if (last) plain.Finish(out);
}

void Exchange::RequestBody(std::string_view piece, const DataSpans* data, bool last,
                           std::string& out) {
  Body(*request_body_, request_chunked_, piece, data, last, out);
}

void Exchange::ResponseHead(std::string_view head, std::string& out) {
  response_head_->Feed(head, out);
  response_head_->Finish(out);
}

void Exchange::ResponseBody(std::string_view piece, const DataSpans* data, bool last,
                            std::string& out) {
  Body(*response_body_, response_chunked_, piece, data, last, out);
}

bool Exchange::overflowed() const {
  return request_chunked_.held() > kMaxFramedHoldBytes ||
         response_chunked_.held() > kMaxFramedHoldBytes;
}

std::vector<Totals> Exchange::totals() const {
  std::vector<Totals> out;
  auto find = [&](const std::string& name) -> Totals& {
    for (Totals& t : out) {
      if (t.name == name) return t;
    }
    out.push_back({name, 0, 0, 0});
    return out.back();
  };
  const Rewriter* up[] = {request_head_.get(), request_body_.get(), &request_chunked_.payload()};
  for (const Rewriter* r : up) {
    for (const Use& u : r->uses()) {
      find(u.name).injected += u.replaced;
      find(u.name).kept += u.kept;
    }
  }
  const Rewriter* down[] = {response_head_.get(), response_body_.get(),
                            &response_chunked_.payload()};
  for (const Rewriter* r : down) {
    for (const Use& u : r->uses()) find(u.name).masked += u.replaced;
  }
  return out;
}

}  // namespace srt::proxy::inject
