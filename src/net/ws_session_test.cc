// WebSocket endpoints of HttpServer, driven by WsClient / BlockingWsClient and, for frames our
// client never sends (binary), by a raw socket.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/net_test_util.h"
#include "net/ws_client.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::RawConn;
using testing::WaitFor;

// What the server side saw, shared by all handlers of one test.
struct Seen {
  std::mutex mu;
  std::vector<std::string> events;
  std::vector<std::shared_ptr<WsConnection>> conns;
  std::atomic<int> open{0};
  std::atomic<int> closed{0};

  void Add(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
  std::shared_ptr<WsConnection> Conn(size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    return i < conns.size() ? conns[i] : nullptr;
  }
};

class EchoHandler : public WsHandler {
 public:
  EchoHandler(std::shared_ptr<Seen> seen, std::string name)
      : seen_(std::move(seen)), name_(std::move(name)) {}
  void OnOpen(std::shared_ptr<WsConnection> conn) override {
    conn_ = conn;
    {
      std::lock_guard<std::mutex> lock(seen_->mu);
      seen_->conns.push_back(conn);
    }
    seen_->Add("open " + name_);
    ++seen_->open;
    conn->Send("hello " + name_);
  }
  void OnMessage(const std::string& text) override {
    seen_->Add("msg " + text);
    if (text == "throw") throw std::runtime_error("handler failure");
    if (text.rfind("burst ", 0) == 0) {  // "burst N": N messages, then a graceful close
      int n = std::stoi(text.substr(6));
      for (int i = 0; i < n; ++i) conn_->Send("b" + std::to_string(i));
      conn_->Close("bye");
      return;
    }
    conn_->Send("echo:" + text);
  }
  void OnClose() override {
    seen_->Add("close " + name_);
    ++seen_->closed;
  }

 private:
  std::shared_ptr<Seen> seen_;
  std::string name_;
  std::shared_ptr<WsConnection> conn_;
};

class WsServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions o = {}) {
    server_ = std::make_unique<HttpServer>(o);
    ASSERT_TRUE(server_
                    ->AddWebSocket("/ws/{name}",
                                   [seen = seen_](const HttpRequest& r)
                                       -> std::variant<HttpResponse, std::shared_ptr<WsHandler>> {
                                     if (r.Header("authorization") != "Bearer secret") {
                                       return HttpResponse::Error(401, "missing or wrong token");
                                     }
                                     if (r.Param("name") == "explode") {
                                       throw std::runtime_error("acceptor failure");
                                     }
                                     return std::make_shared<EchoHandler>(seen, r.Param("name"));
                                   })
                    .ok());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  // The server goes first: its handlers use the members below.
  void TearDown() override { server_.reset(); }

  std::string Url(const std::string& path) { return LocalUrl(port_, path, "ws"); }
  static WsClient::Headers Auth() { return {{"Authorization", "Bearer secret"}}; }

  std::shared_ptr<Seen> seen_ = std::make_shared<Seen>();
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

TEST_F(WsServerTest, AcceptsWithTokenAndEchoesInOrder) {
  StartServer();
  BlockingWsClient c;
  ASSERT_TRUE(c.Connect(Url("/ws/node%20a"), Auth()).ok());
  auto hello = c.Receive(milliseconds(5000));
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(*hello, "hello node a");
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(c.Send("m" + std::to_string(i)));
  for (int i = 0; i < 50; ++i) {
    auto m = c.Receive(milliseconds(5000));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(*m, "echo:m" + std::to_string(i));
  }
  EXPECT_EQ(seen_->Events().front(), "open node a");
  EXPECT_EQ(server_->connection_count(), 1);
}

// Bad inputs tried: no Authorization header, a wrong token.
TEST_F(WsServerTest, RefusesWithoutTokenAsUnauthenticated) {
  StartServer();
  {
    BlockingWsClient c;
    Status s = c.Connect(Url("/ws/a"));
    EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
    EXPECT_NE(s.message().find("missing or wrong token"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(Url("/ws/a")), std::string::npos) << s.message();
  }
  BlockingWsClient c;
  Status s = c.Connect(Url("/ws/a"), {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
  EXPECT_EQ(seen_->open, 0);
}

// Bad inputs tried: a plain GET on a WebSocket path, an acceptor that throws.
TEST_F(WsServerTest, NonUpgradeIs426AndThrowingAcceptorIs500) {
  StartServer();
  auto r = HttpCall("GET", LocalUrl(port_, "/ws/a"), "", {"Authorization: Bearer secret"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 426);
  EXPECT_EQ(r->headers["upgrade"], "websocket");

  BlockingWsClient c;
  Status s = c.Connect(Url("/ws/explode"), Auth());
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
}

// Bad input tried: a message one byte over ws_max_message_bytes.
TEST_F(WsServerTest, OversizedMessageClosesWith1009) {
  HttpServerOptions o;
  o.ws_max_message_bytes = 1024;
  StartServer(o);
  BlockingWsClient c;
  ASSERT_TRUE(c.Connect(Url("/ws/big"), Auth()).ok());
  ASSERT_TRUE(c.Receive(milliseconds(5000)).ok());  // hello
  ASSERT_TRUE(c.Send(std::string(1024, 'a')));      // exactly the limit: fine
  auto echo = c.Receive(milliseconds(5000));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  ASSERT_TRUE(c.Send(std::string(1025, 'a')));
  auto why = c.WaitClosed(milliseconds(5000));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->code(), StatusCode::kResourceExhausted) << why->ToString();
  EXPECT_NE(why->message().find("1009"), std::string::npos) << why->ToString();
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

// Bad input tried: a binary frame (text only).
TEST_F(WsServerTest, BinaryFrameClosesWith1003) {
  StartServer();
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  std::string head = testing::RawWsHandshake(*conn, "/ws/raw", "Authorization: Bearer secret\r\n");
  ASSERT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
  // Skip the server's "hello raw" text frame (unmasked: 2-byte header).
  std::string hello = conn->ReadUntil([](const std::string& s) { return s.size() >= 11; });
  ASSERT_EQ(hello.size(), 11u);
  EXPECT_EQ(static_cast<uint8_t>(hello[0]), 0x81);
  conn->Write(testing::MaskedFrame(0x2, "\x01\x02\x03"));
  std::string frame = conn->ReadUntil([](const std::string& s) { return s.size() >= 4; });
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>(frame[0]), 0x88);  // FIN + close
  int code = (static_cast<uint8_t>(frame[2]) << 8) | static_cast<uint8_t>(frame[3]);
  EXPECT_EQ(code, 1003);
  conn->Write(testing::MaskedFrame(0x8, frame.substr(2, 2)));  // answer the close handshake
  EXPECT_TRUE(conn->WaitClosed());  // the server half-closed; it waits for our FIN
  conn.reset();
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
}

TEST_F(WsServerTest, ServerSendFromAnotherThreadReachesClient) {
  StartServer();
  BlockingWsClient c;
  ASSERT_TRUE(c.Connect(Url("/ws/push"), Auth()).ok());
  ASSERT_TRUE(c.Receive(milliseconds(5000)).ok());
  ASSERT_TRUE(WaitFor([&] { return seen_->Conn(0) != nullptr; }));
  std::shared_ptr<WsConnection> conn = seen_->Conn(0);
  EXPECT_TRUE(conn->is_open());
  EXPECT_NE(conn->remote_addr().find("127.0.0.1:"), std::string::npos);
  std::thread pusher([&] {
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(conn->Send("push " + std::to_string(i)));
  });
  pusher.join();
  for (int i = 0; i < 100; ++i) {
    auto m = c.Receive(milliseconds(5000));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(*m, "push " + std::to_string(i));
  }
}

TEST_F(WsServerTest, GracefulServerCloseFlushesQueuedMessagesFirst) {
  StartServer();
  BlockingWsClient c;
  ASSERT_TRUE(c.Connect(Url("/ws/burst"), Auth()).ok());
  ASSERT_TRUE(c.Receive(milliseconds(5000)).ok());
  ASSERT_TRUE(c.Send("burst 20"));
  for (int i = 0; i < 20; ++i) {
    auto m = c.Receive(milliseconds(5000));
    ASSERT_TRUE(m.ok()) << i << " " << m.status().ToString();
    EXPECT_EQ(*m, "b" + std::to_string(i));
  }
  auto why = c.WaitClosed(milliseconds(5000));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(why->ok()) << why->ToString();  // 1000
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
  EXPECT_FALSE(seen_->Conn(0)->Send("late"));
  EXPECT_FALSE(seen_->Conn(0)->is_open());
}

// Bad handler behaviour tried: OnMessage throws.
TEST_F(WsServerTest, ThrowingHandlerClosesWith1011) {
  StartServer();
  BlockingWsClient c;
  ASSERT_TRUE(c.Connect(Url("/ws/t"), Auth()).ok());
  ASSERT_TRUE(c.Send("throw"));
  auto why = c.WaitClosed(milliseconds(5000));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->code(), StatusCode::kUnavailable);
  EXPECT_NE(why->message().find("1011"), std::string::npos) << why->ToString();
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
}

TEST_F(WsServerTest, ServerStopClosesClients) {
  StartServer();
  WsClientLoop loop(1);
  std::atomic<int> connected{0};
  std::atomic<int> closed{0};
  std::mutex mu;
  std::vector<Status> reasons;
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < 5; ++i) {
    clients.push_back(loop.NewClient());
    clients.back()->SetOnClosed([&](const Status& why) {
      std::lock_guard<std::mutex> lock(mu);
      reasons.push_back(why);
      ++closed;
    });
    clients.back()->Connect(Url("/ws/c" + std::to_string(i)), Auth(), [&](const Status& s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      ++connected;
    });
  }
  ASSERT_TRUE(WaitFor([&] { return seen_->open == 5; }));
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2500));
  ASSERT_TRUE(WaitFor([&] { return closed == 5; }));
  EXPECT_EQ(seen_->closed, 5);
  {
    // Not held while destroying clients: their destructor waits for running callbacks, which
    // take `mu`.
    std::lock_guard<std::mutex> lock(mu);
    for (const Status& why : reasons) {
      EXPECT_EQ(why.code(), StatusCode::kUnavailable) << why.ToString();
      EXPECT_NE(why.message().find("1001"), std::string::npos) << why.ToString();
    }
  }
  EXPECT_FALSE(seen_->Conn(0)->Send("after stop"));
  clients.clear();
}

// A peer that never reads: the server's bounded queue overflows and the connection is dropped.
TEST_F(WsServerTest, SlowPeerOverflowsQueueAndIsDropped) {
  HttpServerOptions o;
  o.ws_max_queued_bytes = 64 << 10;
  StartServer(o);
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->SetReceiveBuffer(4096);
  std::string head = testing::RawWsHandshake(*conn, "/ws/slow", "Authorization: Bearer secret\r\n");
  ASSERT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
  ASSERT_TRUE(WaitFor([&] { return seen_->Conn(0) != nullptr; }));
  std::shared_ptr<WsConnection> ws = seen_->Conn(0);
  std::string chunk(16 << 10, 'x');
  int sent = 0;
  while (sent < 20000 && ws->Send(chunk)) ++sent;  // 20000 * 16 KiB = 320 MiB: never all fits
  EXPECT_LT(sent, 20000);
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
  EXPECT_FALSE(ws->is_open());
}

// Bad input tried: a peer that completes the handshake and then never answers pings.
TEST_F(WsServerTest, IdlePingsKeepLiveClientsAndDropSilentOnes) {
  HttpServerOptions o;
  o.ws_idle_timeout = milliseconds(400);
  StartServer(o);
  BlockingWsClient live;
  ASSERT_TRUE(live.Connect(Url("/ws/live"), Auth()).ok());
  ASSERT_TRUE(live.Receive(milliseconds(5000)).ok());
  auto silent = RawConn::Connect(port_);
  ASSERT_TRUE(silent);
  std::string head =
      testing::RawWsHandshake(*silent, "/ws/silent", "Authorization: Bearer secret\r\n");
  ASSERT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
  // The silent peer gets a ping (opcode 0x9) and, never answering, is dropped.
  std::string frames = silent->ReadUntil(
      [](const std::string& s) { return s.find(static_cast<char>(0x89)) != std::string::npos; });
  EXPECT_NE(frames.find(static_cast<char>(0x89)), std::string::npos);
  EXPECT_TRUE(WaitFor([&] { return seen_->closed == 1; }));
  EXPECT_EQ(seen_->Events().back(), "close silent");
  // The live client answers pings (its reads are always pending): it survives several more
  // idle periods (real time: asio timers take no fake clock) and still works.
  EXPECT_FALSE(WaitFor([&] { return seen_->closed == 2; }, milliseconds(1200)));
  ASSERT_TRUE(live.Send("still here"));
  auto echo = live.Receive(milliseconds(5000));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(*echo, "echo:still here");
}

TEST_F(WsServerTest, ManyClientsOnOneLoop) {
  StartServer();
  constexpr int kClients = 500;
  WsClientLoop loop(1);
  std::atomic<int> connected{0};
  std::atomic<int> echoed{0};
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    auto c = loop.NewClient();
    c->SetOnMessage([&](const std::string& text) {
      if (text.rfind("echo:", 0) == 0) ++echoed;
    });
    WsClient* raw = c.get();
    c->Connect(Url("/ws/n" + std::to_string(i)), Auth(), [&, raw](const Status& s) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      ++connected;
      raw->Send("ping");
    });
    clients.push_back(std::move(c));
  }
  ASSERT_TRUE(WaitFor([&] { return echoed == kClients; }, milliseconds(30000)))
      << connected << " connected, " << echoed << " echoed";
  EXPECT_EQ(server_->connection_count(), kClients);
  clients.clear();
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }, milliseconds(10000)))
      << server_->connection_count();
  EXPECT_EQ(seen_->closed, kClients);
}

}  // namespace
}  // namespace rota::net
