#pragma once
// The server's decoder of agent messages: DecodeAgentMessage's answer, with a
// faster path for "samples" messages, the bulk of what agents send (every node
// every sample interval). That path parses with simdjson's DOM (one parser per
// thread, its buffers reused) and decodes through the same rules as the
// nlohmann decoder (api/sample_decode.h). Any other message type, and any
// message the fast path does not accept as it stands, goes through
// DecodeAgentMessage, so every error reads the same. Known difference: an
// object with a repeated key gives the first value here, the last there.

#include <optional>
#include <string>

#include "api/protocol.h"

namespace rota::api {

Result<AgentMessage> DecodeAgentMessageFast(const std::string& text);

// The fast path alone: the samples message, or nullopt when it does not take
// `text` (another type, an error, anything it leaves to DecodeAgentMessage).
std::optional<SamplesMsg> DecodeSamplesFast(const std::string& text);

}  // namespace rota::api
