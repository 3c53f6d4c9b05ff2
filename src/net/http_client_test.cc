// The curl client and event streams end to end (HttpServer::AddEventStream + ReadEventStream),
// plus the event-stream parser alone.

#include "net/http_client.h"

#include <gtest/gtest.h>

#include <set>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "net/http_server.h"
#include "net/net_test_util.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::RawConn;
using testing::WaitFor;

using Events = std::vector<std::pair<std::string, std::string>>;

Events ParseAll(const std::vector<std::string>& pieces) {
  EventStreamParser p;
  Events out;
  for (const std::string& piece : pieces) {
    p.Feed(piece, [&](const std::string& e, const std::string& d) {
      out.emplace_back(e, d);
      return true;
    });
  }
  return out;
}

TEST(EventStreamParserTest, ParsesEventsAcrossArbitrarySplits) {
  std::string stream =
      ": keep-alive\n\nevent: node\ndata: {\"a\":1}\n\ndata: line1\r\ndata: line2\r\n\r\n"
      "event: x\nid: 7\nretry: 10\ndata:nospace\n\n";
  Events want = {{"node", "{\"a\":1}"}, {"message", "line1\nline2"}, {"x", "nospace"}};
  EXPECT_EQ(ParseAll({stream}), want);
  // Every split point, including inside "\r\n".
  for (size_t i = 1; i < stream.size(); ++i) {
    EXPECT_EQ(ParseAll({stream.substr(0, i), stream.substr(i)}), want) << "split at " << i;
  }
}

// Bad inputs tried: an event with no data (not dispatched), a bare "data" field, an unknown
// field, a stream ending without the blank line (not dispatched).
TEST(EventStreamParserTest, OddInputs) {
  Events want = {{"message", ""}};
  EXPECT_EQ(ParseAll({"event: lonely\n\ndata\n\nbogus: 1\n\ndata: unfinished\n"}), want);
}

TEST(EventStreamParserTest, StopsWhenTheCallbackSaysSo) {
  EventStreamParser p;
  int calls = 0;
  bool more = p.Feed("data: 1\n\ndata: 2\n\n", [&](const std::string&, const std::string&) {
    ++calls;
    return false;
  });
  EXPECT_FALSE(more);
  EXPECT_EQ(calls, 1);
}

// A server with one event-stream endpoint whose sinks the test drives.
class EventStreamTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions o = {}) {
    server_ = std::make_unique<HttpServer>(o);
    ASSERT_TRUE(server_
                    ->AddEventStream("/events/{topic}",
                                     [this](const HttpRequest& r, std::shared_ptr<EventSink> sink)
                                         -> std::optional<HttpResponse> {
                                       if (r.Header("authorization") != "Bearer secret") {
                                         return HttpResponse::Error(401, "no token");
                                       }
                                       sink->Send("hello", r.Param("topic"));
                                       // Sends before the stream's session has started.
                                       std::string chunk(16 << 10, 'y');
                                       for (size_t b = 0; b < flood_in_acceptor_; b += chunk.size())
                                         sink->Send("flood", chunk);
                                       std::lock_guard<std::mutex> lock(mu_);
                                       sinks_.push_back(sink);
                                       return std::nullopt;
                                     })
                    .ok());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok());
    port_ = *port;
  }
  // The server goes first: its handlers use the members below.
  void TearDown() override { server_.reset(); }

  std::shared_ptr<EventSink> Sink(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return i < sinks_.size() ? sinks_[i] : nullptr;
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  size_t flood_in_acceptor_ = 0;  // bytes the acceptor sends before it returns
  std::mutex mu_;
  std::vector<std::shared_ptr<EventSink>> sinks_;
};

TEST_F(EventStreamTest, ClientReceivesEventsInOrderAndDisconnectFailsSend) {
  StartServer();
  Events got;
  std::mutex got_mu;
  Status result = Status::Internal("not finished");
  std::thread reader([&] {
    result = ReadEventStream(LocalUrl(port_, "/events/gpu%201"), {"Authorization: Bearer secret"},
                             [&](const std::string& e, const std::string& d) {
                               std::lock_guard<std::mutex> lock(got_mu);
                               got.emplace_back(e, d);
                               return got.size() < 51;  // hello + 50 events, then disconnect
                             });
  });
  ASSERT_TRUE(WaitFor([&] { return Sink(0) != nullptr; }));
  std::shared_ptr<EventSink> sink = Sink(0);
  EXPECT_NE(sink->remote_addr().find("127.0.0.1"), std::string::npos);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(sink->Send("sample", "{\"i\":" + std::to_string(i) + "}\nsecond line"));
  }
  reader.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  ASSERT_EQ(got.size(), 51u);
  EXPECT_EQ(got[0], std::make_pair(std::string("hello"), std::string("gpu 1")));
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(got[i + 1].first, "sample");
    EXPECT_EQ(got[i + 1].second, "{\"i\":" + std::to_string(i) + "}\nsecond line");
  }
  // The client is gone: Send turns false once the server notices.
  EXPECT_TRUE(WaitFor([&] { return !sink->Send("late", "x"); }));
  EXPECT_FALSE(sink->is_open());
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

// End(): the events queued before it reach the client, then the stream closes (the
// reader returns OK without being told to stop); sends after it are refused.
TEST_F(EventStreamTest, EndWritesWhatIsQueuedThenClosesTheStream) {
  StartServer();
  Events got;
  Status result = Status::Internal("not finished");
  std::thread reader([&] {
    result = ReadEventStream(LocalUrl(port_, "/events/x"), {"Authorization: Bearer secret"},
                             [&](const std::string& e, const std::string& d) {
                               got.emplace_back(e, d);
                               return true;  // never stops by itself
                             });
  });
  ASSERT_TRUE(WaitFor([&] { return Sink(0) != nullptr; }));
  std::shared_ptr<EventSink> sink = Sink(0);
  ASSERT_TRUE(sink->Send("last", "1"));
  ASSERT_TRUE(sink->Send("last", "2"));
  sink->End();
  sink->End();  // idempotent
  EXPECT_FALSE(sink->Send("late", "3"));
  reader.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1], std::make_pair(std::string("last"), std::string("1")));
  EXPECT_EQ(got[2], std::make_pair(std::string("last"), std::string("2")));
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

// Bad inputs tried: no token (refused with 401), POST on a stream path.
TEST_F(EventStreamTest, RefusalAndWrongMethod) {
  StartServer();
  Status s = ReadEventStream(LocalUrl(port_, "/events/a"), {},
                             [](const std::string&, const std::string&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
  EXPECT_NE(s.message().find("no token"), std::string::npos) << s.message();
  auto r = HttpCall("POST", LocalUrl(port_, "/events/a"), "x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->headers["allow"], "GET");
}

TEST_F(EventStreamTest, KeepAliveCommentsAndServerStopEndsTheStream) {
  HttpServerOptions o;
  o.sse_keepalive_interval = milliseconds(50);
  StartServer(o);
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write("GET /events/k HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n");
  std::string data = conn->ReadUntil(
      [](const std::string& s) { return s.find(": keep-alive\n\n") != std::string::npos; });
  EXPECT_EQ(data.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << data;
  EXPECT_NE(data.find("Content-Type: text/event-stream\r\n"), std::string::npos) << data;
  EXPECT_NE(data.find("event: hello\ndata: k\n\n"), std::string::npos) << data;
  EXPECT_NE(data.find(": keep-alive\n\n"), std::string::npos) << data;
  server_->Stop();
  EXPECT_TRUE(conn->WaitClosed());
  EXPECT_FALSE(Sink(0)->Send("after", "stop"));
}

// A client that never reads: the bounded queue overflows and the client is dropped.
TEST_F(EventStreamTest, SlowClientIsDropped) {
  HttpServerOptions o;
  o.sse_max_queued_bytes = 64 << 10;
  StartServer(o);
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->SetReceiveBuffer(4096);
  conn->Write("GET /events/slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return Sink(0) != nullptr; }));
  std::shared_ptr<EventSink> sink = Sink(0);
  std::string data(16 << 10, 'x');
  int sent = 0;
  while (sent < 20000 && sink->Send("bulk", data)) ++sent;
  EXPECT_LT(sent, 20000);
  EXPECT_FALSE(sink->is_open());
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

// The queue overflows before the stream's session has started (the acceptor itself sends
// too much): the client is still dropped, not left connected with nothing to read.
TEST_F(EventStreamTest, OverflowBeforeTheStreamStartsDropsTheClient) {
  HttpServerOptions o;
  o.sse_max_queued_bytes = 64 << 10;
  flood_in_acceptor_ = 128 << 10;
  StartServer(o);
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write("GET /events/early HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return Sink(0) != nullptr; }));
  EXPECT_FALSE(Sink(0)->is_open());
  EXPECT_TRUE(conn->WaitClosed());
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

// Bad inputs tried: connection refused, a malformed URL, a header containing a line break.
TEST(HttpCallTest, TransportErrorsNameTheUrl) {
  HttpServer probe;
  auto port = probe.Start();
  ASSERT_TRUE(port.ok());
  probe.Stop();  // the port is now closed
  std::string url = LocalUrl(*port, "/x");
  auto r = HttpCall("GET", url, "", {}, 2000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(url), std::string::npos) << r.status().message();

  r = HttpCall("GET", "nope://x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();

  r = HttpCall("GET", url, "", {"X-Evil: a\r\nInjected: b"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  Status s = ReadEventStream(
      url, {}, [](const std::string&, const std::string&) { return true; }, 2000);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(url), std::string::npos) << s.message();
}

// Calls on one HttpConnection share one TCP connection (the server sees one client
// port); separate HttpCalls do not; a failed call does not spoil the next.
TEST(HttpConnectionTest, KeepsItsConnectionBetweenCalls) {
  HttpServer server;
  ASSERT_TRUE(server.Route("POST", "/echo", [](const HttpRequest& r) {
                return HttpResponse::Json(200, "{\"peer\":\"" + r.remote_addr + "\",\"body\":" +
                                                   (r.body.empty() ? "null" : r.body) + "}");
              }).ok());
  auto port = server.Start();
  ASSERT_TRUE(port.ok());
  const std::string url = LocalUrl(*port, "/echo");
  HttpConnection conn;
  std::set<std::string> peers;
  for (int i = 0; i < 5; ++i) {
    auto r = conn.Call("POST", url, std::to_string(i), {"Content-Type: application/json"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("\"body\":" + std::to_string(i)), std::string::npos) << r->body;
    peers.insert(r->body.substr(0, r->body.find(",")));
  }
  EXPECT_EQ(peers.size(), 1u);
  auto missing = conn.Call("GET", LocalUrl(*port, "/nothing"));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  auto again = conn.Call("POST", url, "7");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->body.find("\"body\":7"), std::string::npos) << again->body;
  std::set<std::string> separate;
  for (int i = 0; i < 3; ++i) {
    auto r = HttpCall("POST", url, "1");
    ASSERT_TRUE(r.ok());
    separate.insert(r->body.substr(0, r->body.find(",")));
  }
  EXPECT_EQ(separate.size(), 3u);
}

}  // namespace
}  // namespace rota::net
