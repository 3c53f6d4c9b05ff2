// HttpServer over real sockets on 127.0.0.1 (port 0), driven by the curl client and by raw
// sockets for malformed, partial and pipelined input. Timeouts are real (asio timers cannot
// take a fake clock); they are set to a few hundred ms and waited on by polling.

#include "net/http_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/net_test_util.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::RawConn;
using testing::WaitFor;

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(options);
    ASSERT_TRUE(server_
                    ->Route("GET", "/api/v1/nodes/{name}/gpus/{index}/metrics",
                            [](const HttpRequest& r) {
                              return HttpResponse::Json(
                                  200, "{\"name\":\"" + JsonEscape(r.Param("name")) +
                                           "\",\"index\":\"" + r.Param("index") +
                                           "\",\"since\":\"" + JsonEscape(r.Query("since")) +
                                           "\"}");
                            })
                    .ok());
    ASSERT_TRUE(server_
                    ->Route("POST", "/echo",
                            [](const HttpRequest& r) {
                              HttpResponse res = HttpResponse::Text(201, r.body);
                              res.headers.emplace_back("X-Method", r.method);
                              res.headers.emplace_back("X-Agent", r.Header("user-agent"));
                              return res;
                            })
                    .ok());
    ASSERT_TRUE(
        server_
            ->Route("GET", "/echo",
                    [](const HttpRequest& r) { return HttpResponse::Text(200, "get:" + r.target); })
            .ok());
    ASSERT_TRUE(
        server_
            ->Route("GET", "/throw",
                    [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); })
            .ok());
    ASSERT_TRUE(
        server_->Route("GET", "/throw-int", [](const HttpRequest&) -> HttpResponse { throw 42; })
            .ok());
    ASSERT_TRUE(server_
                    ->Route("GET", "/bad-status",
                            [](const HttpRequest&) { return HttpResponse::Json(42, "{}"); })
                    .ok());
    ASSERT_TRUE(server_
                    ->Route("GET", "/slow",
                            [this](const HttpRequest&) {
                              slow_started_ = true;
                              std::unique_lock<std::mutex> lock(mu_);
                              slow_cv_.wait_for(lock, std::chrono::seconds(20),
                                                [&] { return slow_released_; });
                              return HttpResponse::Json(200, "{}");
                            })
                    .ok());
    server_->SetObserver([this](const HttpRequest& r, int status, double seconds) {
      std::lock_guard<std::mutex> lock(mu_);
      observed_.push_back(r.method + " " + r.path + " " + std::to_string(status));
      EXPECT_GE(seconds, 0.0);
    });
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    ASSERT_NE(port_, 0);
  }

  // The server goes first: its handlers use the members below.
  void TearDown() override {
    ReleaseSlow();
    server_.reset();
  }

  // Lets /slow handlers, which run until then, answer.
  void ReleaseSlow() {
    std::lock_guard<std::mutex> lock(mu_);
    slow_released_ = true;
    slow_cv_.notify_all();
  }

  std::string Url(const std::string& path) { return LocalUrl(port_, path); }

  std::vector<std::string> Observed() {
    std::lock_guard<std::mutex> lock(mu_);
    return observed_;
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<std::string> observed_;
  std::atomic<bool> slow_started_{false};
  std::condition_variable slow_cv_;
  bool slow_released_ = false;  // guarded by mu_
};

TEST_F(HttpServerTest, RoutesWithPathParamsAndDecodedQuery) {
  StartServer();
  auto r = HttpCall("GET", Url("/api/v1/nodes/node%20a/gpus/3/metrics?since=2026-01-01T00%3A00Z"
                               "&x=a+b"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"name":"node a","index":"3","since":"2026-01-01T00:00Z"})");
  EXPECT_EQ(r->headers["content-type"], "application/json");
  EXPECT_EQ(r->headers["server"], "rota");

  r = HttpCall("POST", Url("/echo"), "hello body", {"User-Agent: test-agent"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, "hello body");
  EXPECT_EQ(r->headers["x-method"], "POST");
  EXPECT_EQ(r->headers["x-agent"], "test-agent");
  // The observer runs after the response is written: the client may see the first response,
  // and the second request be observed, before the first observer call. Compare as a set.
  EXPECT_TRUE(WaitFor([&] { return Observed().size() == 2; }));
  std::vector<std::string> seen = Observed();
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /api/v1/nodes/node%20a/gpus/3/metrics 200",
                                            "POST /echo 201"}));
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  StartServer();
  auto r = HttpCall("GET", Url("/nope"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, R"({"error":{"code":"not_found","message":"no route for /nope"}})");

  r = HttpCall("DELETE", Url("/echo"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->headers["allow"], "GET, POST");
}

// HEAD answers as GET does, headers only: the next answer on the connection
// follows the headers at once.
TEST_F(HttpServerTest, HeadIsGetWithoutTheBody) {
  StartServer();
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write("HEAD /echo?x HTTP/1.1\r\nHost: x\r\n\r\nGET /echo?after HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string data = conn->ReadUntil([](const std::string& s) { return s.find("get:/echo?after") != std::string::npos; });
  ASSERT_TRUE(StartsWith(data, "HTTP/1.1 200")) << data;
  const size_t head_end = data.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << data;
  EXPECT_NE(data.substr(0, head_end).find("Content-Length: " + std::to_string(std::string("get:/echo?x").size())),
            std::string::npos)
      << data;
  EXPECT_EQ(data.compare(head_end + 4, 12, "HTTP/1.1 200"), 0) << data;
}

// A handler that throws answers a HEAD with headers only too: the next answer on the
// connection follows at once.
TEST_F(HttpServerTest, HeadOfAThrowingHandlerHasNoBody) {
  StartServer();
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write("HEAD /throw HTTP/1.1\r\nHost: x\r\n\r\nGET /echo?after HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string data = conn->ReadUntil([](const std::string& s) { return s.find("get:/echo?after") != std::string::npos; });
  ASSERT_TRUE(StartsWith(data, "HTTP/1.1 500")) << data;
  const size_t head_end = data.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << data;
  EXPECT_EQ(data.compare(head_end + 4, 12, "HTTP/1.1 200"), 0) << data;
}

// Bad inputs tried: a bad escape in the query, in a path parameter; bytes that are not UTF-8.
TEST_F(HttpServerTest, BadPercentEncodingIs400) {
  StartServer();
  auto r = HttpCall("GET", Url("/api/v1/nodes/a/gpus/1/metrics?since=%zz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("since"), std::string::npos) << r->body;
  r = HttpCall("GET", Url("/api/v1/nodes/a%4/gpus/1/metrics"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  r = HttpCall("GET", Url("/api/v1/nodes/a/gpus/1/metrics?label=%FF"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("not UTF-8"), std::string::npos) << r->body;
  r = HttpCall("GET", Url("/api/v1/nodes/a%C0%AF/gpus/1/metrics"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
}

// Bad inputs tried: a Content-Length body over the limit (curl), a chunked body over the limit
// (raw socket).
TEST_F(HttpServerTest, BodyOverLimitIs413AndServerStillServes) {
  HttpServerOptions o;
  o.max_body_bytes = 1024;
  StartServer(o);
  auto r = HttpCall("POST", Url("/echo"), std::string(10 * 1024, 'x'));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("payload_too_large"), std::string::npos) << r->body;

  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  std::string chunk(800, 'y');
  conn->Write("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n320\r\n" +
              chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n");
  std::string resp = conn->ReadResponse();
  EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 413")) << resp;
  EXPECT_TRUE(conn->WaitClosed());

  r = HttpCall("POST", Url("/echo"), std::string(1024, 'z'));  // exactly the limit
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body.size(), 1024u);
}

// Bad inputs tried: garbage request line, unknown method token with bad characters, target
// with a control character, absolute-form target, bad HTTP version, header line without a
// colon, non-numeric Content-Length, two different Content-Lengths, bad chunk size.
TEST_F(HttpServerTest, MalformedRequestsAre400AndClosed) {
  StartServer();
  const std::vector<std::string> bad = {
      "GARBAGE\r\n\r\n",
      "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /a\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET http://example.com/echo HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /echo HTTP/x.y\r\nHost: x\r\n\r\n",
      "GET /echo HTTP/1.1\r\nNo colon here\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
  };
  for (const std::string& request : bad) {
    auto conn = RawConn::Connect(port_);
    ASSERT_TRUE(conn);
    conn->Write(request);
    std::string resp = conn->ReadResponse();
    EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 400"))
        << "request: " << request << "\nresponse: " << resp;
    EXPECT_NE(resp.find("invalid_argument"), std::string::npos) << resp;
    EXPECT_TRUE(conn->WaitClosed()) << request;
  }
  auto r = HttpCall("GET", Url("/echo"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

// Bad input tried: a header block over max_header_bytes.
TEST_F(HttpServerTest, HeaderOverLimitIs431) {
  HttpServerOptions o;
  o.max_header_bytes = 1024;
  StartServer(o);
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write("GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  std::string resp = conn->ReadResponse();
  EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 431")) << resp;
  EXPECT_TRUE(conn->WaitClosed());
}

// Bad handler behaviour tried: throwing std::exception, throwing a non-exception, returning an
// invalid status code.
TEST_F(HttpServerTest, HandlerFailuresBecome500) {
  StartServer();
  for (const char* path : {"/throw", "/throw-int", "/bad-status"}) {
    auto r = HttpCall("GET", Url(path));
    ASSERT_TRUE(r.ok()) << path;
    EXPECT_EQ(r->status, 500) << path;
    EXPECT_NE(r->body.find("\"code\":\"internal\""), std::string::npos) << r->body;
  }
  auto r = HttpCall("GET", Url("/echo"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, KeepAliveReusesOneConnectionAndPipelines) {
  StartServer();
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  for (int i = 0; i < 3; ++i) {
    conn->Write("GET /echo?i=" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string resp = conn->ReadResponse();
    EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 200")) << resp;
    EXPECT_NE(resp.find("get:/echo?i=" + std::to_string(i)), std::string::npos) << resp;
  }
  EXPECT_EQ(server_->connection_count(), 1);

  // Two requests (one with a body) in one write: answered in order.
  conn->Write(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst"
      "GET /echo?second HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string a = conn->ReadResponse();
  std::string b = conn->ReadResponse();
  EXPECT_TRUE(StartsWith(a, "HTTP/1.1 201")) << a;
  EXPECT_NE(a.find("first"), std::string::npos);
  EXPECT_NE(b.find("get:/echo?second"), std::string::npos) << b;

  // Connection: close is honoured.
  conn->Write("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(StartsWith(conn->ReadResponse(), "HTTP/1.1 200"));
  EXPECT_TRUE(conn->WaitClosed());
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(HttpServerTest, ExpectContinueGets100BeforeTheBody) {
  StartServer();
  auto conn = RawConn::Connect(port_);
  ASSERT_TRUE(conn);
  conn->Write(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  std::string cont =
      conn->ReadUntil([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
  EXPECT_TRUE(StartsWith(cont, "HTTP/1.1 100 Continue")) << cont;
  conn->Write("body");
  std::string resp = conn->ReadResponse();
  EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 201")) << resp;
}

// Bad inputs tried: a silent connection (idle timeout), a request that stops half-way through
// its headers (slowloris: request timeout).
TEST_F(HttpServerTest, IdleAndSlowConnectionsAreClosed) {
  HttpServerOptions o;
  o.idle_timeout = milliseconds(300);
  o.request_timeout = milliseconds(300);
  StartServer(o);
  auto idle = RawConn::Connect(port_);
  auto slow = RawConn::Connect(port_);
  ASSERT_TRUE(idle && slow);
  slow->Write("GET /echo HTTP/1.1\r\nHost: x\r\n");
  EXPECT_TRUE(idle->WaitClosed(milliseconds(3000)));
  EXPECT_TRUE(slow->WaitClosed(milliseconds(3000)));
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(HttpServerTest, HoldsManyIdleConnections) {
  StartServer();
  constexpr int kConns = 500;
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(RawConn::Connect(port_));
    ASSERT_TRUE(conns.back()) << i;
  }
  ASSERT_TRUE(WaitFor([&] { return server_->connection_count() == kConns; }))
      << server_->connection_count();
  // Every one of them still works, and a fresh client too.
  for (int i = 0; i < kConns; i += 50) {
    conns[i]->Write("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(StartsWith(conns[i]->ReadResponse(), "HTTP/1.1 200")) << i;
  }
  auto r = HttpCall("GET", Url("/echo"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  conns.clear();
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(HttpServerTest, ConnectionsOverTheLimitGet503) {
  HttpServerOptions o;
  o.max_connections = 2;
  StartServer(o);
  auto a = RawConn::Connect(port_);
  auto b = RawConn::Connect(port_);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(WaitFor([&] { return server_->connection_count() == 2; }));
  auto c = RawConn::Connect(port_);
  ASSERT_TRUE(c);
  std::string resp = c->ReadResponse();
  EXPECT_TRUE(StartsWith(resp, "HTTP/1.1 503")) << resp;
  EXPECT_NE(resp.find("too many connections"), std::string::npos);
  a.reset();
  ASSERT_TRUE(WaitFor([&] { return server_->connection_count() == 1; }));
  auto r = HttpCall("GET", Url("/echo"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

// Bad inputs tried: a bind address that is not an IP, a port already in use, Start twice,
// registration after Start, zero threads.
TEST_F(HttpServerTest, StartErrors) {
  StartServer();
  EXPECT_EQ(server_->Start().status().code(), StatusCode::kConflict);
  EXPECT_EQ(
      server_->Route("GET", "/late", [](const HttpRequest&) { return HttpResponse{}; }).code(),
      StatusCode::kConflict);

  HttpServerOptions bad_addr;
  bad_addr.bind_address = "not-an-ip";
  HttpServer s1(bad_addr);
  EXPECT_EQ(s1.Start().status().code(), StatusCode::kInvalidArgument);

  HttpServerOptions taken;
  taken.port = port_;
  HttpServer s2(taken);
  auto st = s2.Start();
  EXPECT_EQ(st.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(st.status().message().find(std::to_string(port_)), std::string::npos)
      << st.status().message();

  HttpServerOptions no_threads;
  no_threads.threads = 0;
  HttpServer s3(no_threads);
  EXPECT_EQ(s3.Start().status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpServerTest, StopClosesConnectionsAndRefusesNewOnes) {
  StartServer();
  auto idle = RawConn::Connect(port_);
  ASSERT_TRUE(idle);
  ASSERT_TRUE(WaitFor([&] { return server_->connection_count() == 1; }));
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(idle->WaitClosed(milliseconds(1000)));
  EXPECT_EQ(server_->connection_count(), 0);
  auto r = HttpCall("GET", Url("/echo"), "", {}, 2000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(Url("/echo")), std::string::npos) << r.status().message();
  server_->Stop();  // idempotent
}

TEST_F(HttpServerTest, StopWaitsForARunningHandler) {
  StartServer();
  std::thread client([&] {
    auto r = HttpCall("GET", Url("/slow"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
  });
  ASSERT_TRUE(WaitFor([&] { return slow_started_.load(); }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server_->Stop();
    stopped = true;
  });
  // Stop has begun once the listener is closed; the handler still runs, so Stop waits.
  EXPECT_TRUE(WaitFor([&] { return RawConn::Connect(port_) == nullptr; }));
  EXPECT_FALSE(stopped.load()) << "Stop returned while a handler was running";
  ReleaseSlow();  // its response must still arrive
  stopper.join();
  client.join();
}

TEST_F(HttpServerTest, ClientTimeoutIsUnavailable) {
  StartServer();
  auto r = HttpCall("GET", Url("/slow"), "", {}, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("/slow"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace rota::net
