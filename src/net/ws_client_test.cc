// WsClient failure modes and lifetime rules, against HttpServer and raw listening sockets.

#include "net/ws_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "net/http_server.h"
#include "net/net_test_util.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::WaitFor;

// A listening socket that never accepts: the kernel completes TCP handshakes, nobody answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

uint16_t UnusedPort() {
  SilentListener l;
  return l.port();  // closed when l goes away: connecting is refused
}

class EchoWs : public WsHandler {
 public:
  void OnOpen(std::shared_ptr<WsConnection> c) override { conn_ = std::move(c); }
  void OnMessage(const std::string& text) override {
    conn_->Send(text == "big" ? std::string(200, 'b') : "echo:" + text);
  }
  void OnClose() override { ++closes; }
  static std::atomic<int> closes;

 private:
  std::shared_ptr<WsConnection> conn_;
};
std::atomic<int> EchoWs::closes{0};

class WsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EchoWs::closes = 0;
    ASSERT_TRUE(
        server_
            .AddWebSocket(
                "/echo",
                [](const HttpRequest&) -> std::variant<HttpResponse, std::shared_ptr<WsHandler>> {
                  return std::make_shared<EchoWs>();
                })
            .ok());
    auto port = server_.Start();
    ASSERT_TRUE(port.ok());
    url_ = LocalUrl(*port, "/echo", "ws");
  }
  HttpServer server_;
  std::string url_;
};

TEST_F(WsClientTest, ConnectionRefusedIsUnavailableNamingTheUrl) {
  BlockingWsClient c;
  std::string url = LocalUrl(UnusedPort(), "/x", "ws");
  Status s = c.Connect(url);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(url), std::string::npos) << s.message();
}

// Bad inputs tried: http:// and ftp:// schemes, a port out of range, no scheme.
TEST_F(WsClientTest, BadUrlsAreInvalidArgument) {
  for (const char* bad :
       {"http://127.0.0.1:1/x", "ftp://127.0.0.1:1/x", "ws://127.0.0.1:99999/", "127.0.0.1:80"}) {
    BlockingWsClient c;
    Status s = c.Connect(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad << ": " << s.ToString();
  }
}

TEST_F(WsClientTest, HandshakeTimeoutIsUnavailable) {
  SilentListener silent;
  WsClientOptions o;
  o.handshake_timeout = milliseconds(300);
  BlockingWsClient c(o);
  auto start = std::chrono::steady_clock::now();
  Status s = c.Connect(LocalUrl(silent.port(), "/", "ws"));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("timed out"), std::string::npos) << s.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
}

TEST_F(WsClientTest, SendBeforeConnectIsDeliveredAndCloseIsClean) {
  WsClientLoop loop;
  auto client = loop.NewClient();
  std::atomic<int> got{0};
  std::atomic<bool> closed_ok{false};
  client->SetOnMessage([&](const std::string& text) {
    if (text == "echo:early") ++got;
  });
  client->SetOnClosed([&](const Status& why) { closed_ok = why.ok(); });
  EXPECT_TRUE(client->Send("early"));
  client->Connect(url_, {}, [](const Status& s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
  ASSERT_TRUE(WaitFor([&] { return got == 1; }));
  client->Close();
  ASSERT_TRUE(WaitFor([&] { return closed_ok.load(); }));
  EXPECT_FALSE(client->Send("after close"));
  EXPECT_TRUE(WaitFor([&] { return EchoWs::closes == 1; }));
}

// Bad uses tried: Connect twice, Close before the connection is up, a send queue overflow.
TEST_F(WsClientTest, MisuseIsReported) {
  WsClientLoop loop;
  {
    auto c = loop.NewClient();
    std::atomic<int> ok{0}, invalid{0};
    auto cb = [&](const Status& s) {
      if (s.ok()) ++ok;
      if (s.code() == StatusCode::kInvalidArgument) ++invalid;
    };
    c->Connect(url_, {}, cb);
    c->Connect(url_, {}, cb);
    EXPECT_TRUE(WaitFor([&] { return ok == 1 && invalid == 1; }));
  }
  {
    WsClientOptions o;
    o.max_queued_bytes = 1000;
    auto c = loop.NewClient(o);
    EXPECT_TRUE(c->Send(std::string(600, 'a')));
    EXPECT_FALSE(c->Send(std::string(600, 'a')));  // over 1000 queued bytes
    EXPECT_FALSE(c->Send("x"));                    // closed now
  }
  {
    auto c = loop.NewClient();
    std::atomic<int> calls{0};
    Status result;
    std::atomic<bool> closed_called{false};
    c->SetOnClosed([&](const Status&) { closed_called = true; });
    c->Connect(url_, {}, [&](const Status& s) {
      result = s;
      ++calls;
    });
    c->Close();
    ASSERT_TRUE(WaitFor([&] { return calls == 1; }));
    // Either the close won the race (Unavailable) or the connect did and a close follows.
    if (!result.ok()) {
      EXPECT_EQ(result.code(), StatusCode::kUnavailable) << result.ToString();
    } else {
      EXPECT_TRUE(WaitFor([&] { return closed_called.load(); }));
    }
  }
}

// Bad input tried: a server message over the client's max_message_bytes.
TEST_F(WsClientTest, OversizedIncomingMessageClosesClient) {
  WsClientOptions o;
  o.max_message_bytes = 100;
  BlockingWsClient c(o);
  ASSERT_TRUE(c.Connect(url_).ok());
  ASSERT_TRUE(c.Send("big"));
  auto why = c.WaitClosed(milliseconds(5000));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->code(), StatusCode::kResourceExhausted) << why->ToString();
}

TEST_F(WsClientTest, NoCallbacksAfterDestruction) {
  WsClientLoop loop;
  std::atomic<bool> destroyed{false};
  std::atomic<int> late_calls{0};
  for (int i = 0; i < 20; ++i) {
    destroyed = false;
    auto c = loop.NewClient();
    c->SetOnMessage([&](const std::string&) {
      if (destroyed) ++late_calls;
    });
    c->SetOnClosed([&](const Status&) {
      if (destroyed) ++late_calls;
    });
    c->Connect(url_, {}, [&, raw = c.get()](const Status&) {
      if (destroyed) ++late_calls;
      raw->Send("x");
    });
    c.reset();
    destroyed = true;
  }
  EXPECT_TRUE(WaitFor([&] { return server_.connection_count() == 0; }));
  EXPECT_EQ(late_calls, 0);
}

TEST_F(WsClientTest, ClientMayBeDestroyedInsideItsOwnCallback) {
  WsClientLoop loop;
  std::unique_ptr<WsClient> c = loop.NewClient();
  std::atomic<int> messages{0};
  c->SetOnMessage([&](const std::string&) {
    ++messages;
    c.reset();  // destroys the client from its own callback
  });
  c->Connect(url_, {}, [&, raw = c.get()](const Status& s) {
    ASSERT_TRUE(s.ok());
    raw->Send("a");
    raw->Send("b");
  });
  ASSERT_TRUE(WaitFor([&] { return messages >= 1; }));
  EXPECT_TRUE(WaitFor([&] { return server_.connection_count() == 0; }));
  EXPECT_EQ(messages, 1);
}

// The agent's pattern: a thread holds its own lock while it calls the client, and the client's
// callbacks take that lock. The callback must not run under a lock of the client, or both
// threads wait for ever (this test deadlocked when the client held its callback mutex).
TEST_F(WsClientTest, CallbackMayWaitForALockHeldByAThreadCallingTheClient) {
  WsClientLoop loop;
  std::unique_ptr<WsClient> c = loop.NewClient();
  std::mutex owner_mu;
  std::promise<void> entered;
  std::atomic<bool> connected{false}, caller_done{false};
  std::thread caller([&] {
    std::lock_guard<std::mutex> lock(owner_mu);
    c->Connect(url_, {}, [&](const Status& s) {
      entered.set_value();
      std::lock_guard<std::mutex> wait_for_owner(owner_mu);
      connected = s.ok();
    });
    entered.get_future().wait();                // the callback runs and waits for owner_mu
    c->SetOnClosed([](const Status&) {});       // calls the client with owner_mu held
    EXPECT_TRUE(c->Send("while the callback waits"));
    caller_done = true;
  });
  if (!WaitFor([&] { return caller_done.load(); }, milliseconds(10'000))) {
    std::fprintf(stderr, "deadlock: the client held a lock while its callback waited\n");
    std::_Exit(1);  // the two threads can never be joined
  }
  caller.join();
  EXPECT_TRUE(WaitFor([&] { return connected.load(); }));
}

}  // namespace
}  // namespace rota::net
