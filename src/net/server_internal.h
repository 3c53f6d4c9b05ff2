#pragma once
// Internals shared by the two Beast translation units of HttpServer (http_server.cc,
// ws_session.cc). Includes Boost: never include this from a public header.

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <memory>

#include "net/http_server.h"
#include "net/server_state.h"
#include "net/transport.h"

namespace rota::net::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Hands an accepted upgrade request over to a new WebSocket session (ws_session.cc). `stream`
// must be bound to a strand. `request` is the parsed HttpRequest (for the observer).
void StartWebSocketSession(Transport stream, http::request<http::string_body> upgrade,
                           HttpRequest request, SteadyTime request_time,
                           std::shared_ptr<WsHandler> handler, std::shared_ptr<ServerState> state,
                           ConnectionSlot slot);

}  // namespace rota::net::internal
