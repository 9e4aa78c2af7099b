// SPDX-License-Identifier: Apache-2.0
#include "server/responses.h"

#include "http/response_writer.h"

namespace srt::proxy {

std::string HttpBlocked(bool connect, std::string_view reason) {
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/plain"}, {"X-Proxy-Error", "blocked-by-allowlist"}};
  if (connect) return http::FormatResponse(403, reason, headers, kBlockedBody);
  return http::FormatResponse(403, "Forbidden", headers, std::string(kBlockedBody) + "\n");
}

std::string HttpResolvedBlocked(bool connect, std::string_view host, std::string_view refusal) {
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/plain"}, {"X-Proxy-Error", "blocked-by-sandbox-runtime"}};
  const std::string body =
      "Connection to " + std::string(host) + " blocked: " + std::string(refusal) + "\n";
  return http::FormatResponse(403, connect ? refusal : "Forbidden", headers, body);
}

std::string HttpTooManyTunnels() {
  return http::FormatResponse(503, http::StatusPhrase(503),
                              {{"Content-Type", "text/plain"},
                               {"X-Proxy-Error", "too-many-tunnels"},
                               {"Connection", "close"}},
                              "too many TLS-terminated tunnels at once");
}

std::string HttpRefusedInTunnel(int status, std::string_view reason, bool close) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/plain"}, {"X-Proxy-Error", "blocked-by-sandbox-runtime"}};
  if (close) headers.emplace_back("Connection", "close");
  return http::FormatResponse(status, http::StatusPhrase(status), headers,
                              std::string(reason) + "\n");
}

std::string HttpOpaqueTunnelRefused() {
  return http::FormatResponse(
      403, http::StatusPhrase(403),
      {{"Content-Type", "text/plain"}, {"X-Proxy-Error", "blocked-by-sandbox-runtime"}},
      "this proxy does not tunnel CONNECTs it cannot inspect");
}

std::string HttpDenied(int status, std::string_view mark, std::string_view body, bool close) {
  std::vector<std::pair<std::string, std::string>> headers = {{"Content-Type", "text/plain"},
                                                              {"X-Deny-Reason", std::string(mark)}};
  if (close) headers.emplace_back("Connection", "close");
  return http::FormatResponse(status, http::StatusPhrase(status), headers,
                              std::string(body) + "\n");
}

std::string HttpProxyAuthRequired() {
  return http::FormatResponse(407, http::StatusPhrase(407),
                              {{"Proxy-Authenticate", "Basic realm=\"srt\""}}, "");
}

std::string HttpBadGateway(bool connect) {
  if (connect) return "HTTP/1.1 502 Bad Gateway\r\n\r\n";
  return http::FormatResponse(502, http::StatusPhrase(502), {{"Content-Type", "text/plain"}},
                              "Bad Gateway");
}

std::string HttpError(int status, bool connect) {
  if (connect && status == 400) return "HTTP/1.1 400 Bad Request\r\n\r\n";
  return http::FormatResponse(status, http::StatusPhrase(status), {{"Connection", "close"}}, "");
}

std::string SshPolicyRefusal(std::string_view description) {
  // payload: byte SSH_MSG_DISCONNECT(1), uint32 reason code, string description, string language.
  std::string payload;
  payload.push_back(1);
  auto put32 = [](std::string& out, uint32_t v) {
    out.push_back(static_cast<char>(v >> 24));
    out.push_back(static_cast<char>(v >> 16));
    out.push_back(static_cast<char>(v >> 8));
    out.push_back(static_cast<char>(v));
  };
  put32(payload, 1);  // SSH_DISCONNECT_HOST_NOT_ALLOWED_TO_CONNECT
  put32(payload, static_cast<uint32_t>(description.size()));
  payload += description;
  put32(payload, 0);  // language tag: empty
  // RFC 4253 §6: packet_length || padding_length || payload || padding; the whole is a multiple
  // of 8 bytes and the padding at least 4 bytes.
  size_t padding = 8 - (4 + 1 + payload.size()) % 8;
  if (padding < 4) padding += 8;
  std::string out = "SSH-2.0-policy_refusal\r\n";
  put32(out, static_cast<uint32_t>(1 + payload.size() + padding));
  out.push_back(static_cast<char>(padding));
  out += payload;
  out.append(padding, '\0');
  return out;
}

}  // namespace srt::proxy
