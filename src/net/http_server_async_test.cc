// HttpServer's async routes over real sockets on 127.0.0.1: a handler that keeps its Responder
// leaves the io threads free for every other request, answers from any thread, and a request
// whose Responder is dropped or never answered before Stop() does not hang the client or the
// server.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/net_test_util.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::WaitFor;

// Keeps the Responders of pending requests until the test answers them.
class Parked {
 public:
  void Park(Responder r) {
    MutexLock lock(&mu_);
    parked_.push_back(std::move(r));
  }
  size_t size() {
    MutexLock lock(&mu_);
    return parked_.size();
  }
  // Answers every parked request with `status` from a thread of the test's own.
  void AnswerAll(int status) {
    std::vector<Responder> all;
    {
      MutexLock lock(&mu_);
      all.swap(parked_);
    }
    std::thread([all = std::move(all), status] {
      for (const Responder& r : all) r(HttpResponse::Text(status, "answered later"));
    }).join();
  }
  void DropAll() {
    std::vector<Responder> all;
    MutexLock lock(&mu_);
    all.swap(parked_);
    lock.Unlock();
  }

 private:
  Mutex mu_;
  std::vector<Responder> parked_ ROTA_GUARDED_BY(mu_);
};

class HttpServerAsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.threads = 2;
    options.stop_timeout = milliseconds(500);
    server_ = std::make_unique<HttpServer>(options);
    ASSERT_TRUE(server_
                    ->RouteAsync("GET", "/wait/{id}",
                                 [this](const HttpRequest&, Responder respond) {
                                   parked_.Park(std::move(respond));
                                 })
                    .ok());
    ASSERT_TRUE(server_
                    ->RouteAsync("GET", "/now",
                                 [](const HttpRequest& req, Responder respond) {
                                   respond(HttpResponse::Text(200, "now:" + req.target));
                                 })
                    .ok());
    ASSERT_TRUE(server_
                    ->Route("GET", "/healthz",
                            [](const HttpRequest&) { return HttpResponse::Text(200, "ok"); })
                    .ok());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
  }

  std::unique_ptr<HttpServer> server_;
  Parked parked_;
  uint16_t port_ = 0;
};

// Regression: three concurrent log views (requests waiting on an agent) froze both io threads,
// so /healthz took 9.8 s. Here 8 requests wait at once on a 2-thread server and /healthz still
// answers at once.
TEST_F(HttpServerAsyncTest, WaitingRequestsDoNotBlockTheIoThreads) {
  std::vector<std::future<Result<ClientResponse>>> waiting;
  for (int i = 0; i < 8; ++i) {
    waiting.push_back(std::async(std::launch::async, [this, i] {
      return HttpCall("GET", LocalUrl(port_, "/wait/" + std::to_string(i)), "", {}, 10000);
    }));
  }
  ASSERT_TRUE(WaitFor([this] { return parked_.size() == 8; }));
  const auto start = std::chrono::steady_clock::now();
  auto health = HttpCall("GET", LocalUrl(port_, "/healthz"), "", {}, 2000);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(health.ok()) << health.status().message();
  EXPECT_EQ(health->status, 200);
  EXPECT_LT(took, milliseconds(500));
  parked_.AnswerAll(202);
  for (auto& w : waiting) {
    auto r = w.get();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->status, 202);
    EXPECT_EQ(r->body, "answered later");
  }
}

// An answer given inside the handler and answers on a kept-alive connection keep working, HEAD
// included (the GET answer's headers, no body).
TEST_F(HttpServerAsyncTest, ImmediateAnswersAndKeepAlive) {
  HttpConnection conn;
  for (int i = 0; i < 3; ++i) {
    auto r = conn.Call("GET", LocalUrl(port_, "/now?i=" + std::to_string(i)));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "now:/now?i=" + std::to_string(i));
  }
  auto head = conn.Call("HEAD", LocalUrl(port_, "/now"));
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
}

// A handler that loses its Responder cannot leave the client waiting: it gets a 500.
TEST_F(HttpServerAsyncTest, ADroppedResponderAnswers500) {
  auto pending = std::async(std::launch::async, [this] {
    return HttpCall("GET", LocalUrl(port_, "/wait/x"), "", {}, 5000);
  });
  ASSERT_TRUE(WaitFor([this] { return parked_.size() == 1; }));
  parked_.DropAll();
  auto r = pending.get();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("dropped"), std::string::npos) << r->body;
}

// Stop() with requests still waiting returns (after stop_timeout), and answering them later
// is harmless.
TEST_F(HttpServerAsyncTest, StopWithAwaitedAnswersReturnsAndLateAnswersAreIgnored) {
  auto pending = std::async(std::launch::async, [this] {
    return HttpCall("GET", LocalUrl(port_, "/wait/y"), "", {}, 5000);
  });
  ASSERT_TRUE(WaitFor([this] { return parked_.size() == 1; }));
  server_->Stop();
  auto r = pending.get();
  EXPECT_TRUE(!r.ok() || r->status >= 500);
  parked_.AnswerAll(200);  // after Stop: dropped, no crash
  EXPECT_EQ(server_->connection_count(), 0);
}

}  // namespace
}  // namespace rota::net
