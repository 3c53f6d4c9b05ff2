// The agent protocol decoders (api/protocol.h, api/fast_decode.h) on any text a peer could
// send. Beyond "never crashes", three properties:
//  - whatever a decoder accepts, Encode writes as a message the same decoder accepts, and
//    that message reads back to the same thing (Encode twice gives the same text);
//  - the server's fast samples path (simdjson) accepts exactly what the nlohmann decoder
//    accepts and reads the same values, for text without repeated keys (there it reads the
//    first, the other the last: fast_decode.h);
//  - CommandIdOf finds the id of every command the decoder accepts.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "api/codec.h"
#include "api/fast_decode.h"
#include "api/protocol.h"

namespace {

using rota::api::AgentMessage;
using rota::api::ServerMessage;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "protocol_fuzz: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

template <typename Variant>
std::string EncodeAny(const Variant& v) {
  return std::visit([](const auto& m) { return rota::api::Encode(m); }, v);
}

template <typename Variant, typename DecodeFn>
void CheckRoundTrip(const Variant& decoded, DecodeFn decode) {
  const std::string once = EncodeAny(decoded);
  auto back = decode(once);
  if (!back.ok()) Fail("the decoder refuses what Encode wrote", once, back.status().ToString());
  if (back->index() != decoded.index()) Fail("the message type changed on a round trip", once, EncodeAny(*back));
  const std::string twice = EncodeAny(*back);
  if (twice != once) Fail("a round trip changed the message", once, twice);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto agent = rota::api::DecodeAgentMessage(text);
  if (agent.ok()) CheckRoundTrip(*agent, rota::api::DecodeAgentMessage);

  auto fast = rota::api::DecodeAgentMessageFast(text);
  if (fast.ok() != agent.ok() || (fast.ok() && fast->index() != agent->index())) {
    if (rota::api::ParseStrictJson(text).ok()) {
      Fail("fast and DOM decoders disagree", fast.ok() ? EncodeAny(*fast) : fast.status().ToString(),
           agent.ok() ? EncodeAny(*agent) : agent.status().ToString());
    }
  } else if (fast.ok() && rota::api::ParseStrictJson(text).ok()) {
    const std::string a = EncodeAny(*fast), b = EncodeAny(*agent);
    if (a != b) Fail("fast and DOM decoders read different values", a, b);
  }

  auto server = rota::api::DecodeServerMessage(text);
  if (server.ok()) CheckRoundTrip(*server, rota::api::DecodeServerMessage);
  auto id = rota::api::CommandIdOf(text);
  if (server.ok() && std::holds_alternative<rota::api::CommandMsg>(*server)) {
    if (!id || *id != std::get<rota::api::CommandMsg>(*server).id) {
      Fail("CommandIdOf misses the id of a valid command", text, id ? std::to_string(*id) : "none");
    }
  }
  return 0;
}
