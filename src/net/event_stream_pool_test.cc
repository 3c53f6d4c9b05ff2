// EventStreamPool against a real HttpServer's event streams on loopback: many streams read
// on the pool's one thread, each ending once with how it ended.

#include "net/event_stream_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/http_server.h"
#include "net/net_test_util.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::LocalUrl;
using testing::WaitFor;
using Ending = EventStreamPool::Ending;

// A source: /s/{name} answers 401 without the token, else a stream the test drives.
class EventStreamPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>();
    ASSERT_TRUE(server_
                    ->AddEventStream("/s/{name}",
                                     [this](const HttpRequest& r, std::shared_ptr<EventSink> sink)
                                         -> std::optional<HttpResponse> {
                                       if (r.Header("authorization") != "Bearer t") {
                                         return HttpResponse::Error(401, "no token");
                                       }
                                       sink->Send("hello", r.Param("name"));
                                       std::lock_guard<std::mutex> lock(mu_);
                                       sinks_.push_back(sink);
                                       return std::nullopt;
                                     })
                    .ok());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok());
    port_ = *port;
  }
  void TearDown() override { server_.reset(); }

  size_t Sinks() {
    std::lock_guard<std::mutex> lock(mu_);
    return sinks_.size();
  }
  std::shared_ptr<EventSink> Sink(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return sinks_.at(i);
  }

  // What one stream saw.
  struct Seen {
    std::mutex mu;
    std::vector<std::string> events;  // "event=data"
    std::optional<Ending> how;
    Status error;
    size_t Count() {
      std::lock_guard<std::mutex> lock(mu);
      return events.size();
    }
    bool Ended() {
      std::lock_guard<std::mutex> lock(mu);
      return how.has_value();
    }
  };
  Result<uint64_t> Open(EventStreamPool& pool, const std::string& name, Seen* seen, bool token = true,
                        std::function<bool()> wanted = nullptr, int stop_after = 0) {
    std::vector<std::string> headers;
    if (token) headers.push_back("Authorization: Bearer t");
    return pool.Open(
        LocalUrl(port_, "/s/" + name), headers,
        [seen, stop_after](const std::string& e, const std::string& d) {
          std::lock_guard<std::mutex> lock(seen->mu);
          seen->events.push_back(e + "=" + d);
          return stop_after == 0 || static_cast<int>(seen->events.size()) < stop_after;
        },
        std::move(wanted),
        [seen](Ending how, const Status& error) {
          std::lock_guard<std::mutex> lock(seen->mu);
          EXPECT_FALSE(seen->how.has_value()) << "on_end called twice";
          seen->how = how;
          seen->error = error;
        });
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<std::shared_ptr<EventSink>> sinks_;
};

TEST_F(EventStreamPoolTest, ManyStreamsOnOneThreadEachEndsOnceAsItsSourceEnds) {
  EventStreamPool pool(64, 5000, 0);
  constexpr int kStreams = 20;
  std::vector<std::unique_ptr<Seen>> seen;
  for (int i = 0; i < kStreams; ++i) {
    seen.push_back(std::make_unique<Seen>());
    ASSERT_TRUE(Open(pool, "n" + std::to_string(i), seen.back().get()).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return Sinks() == kStreams; }));
  EXPECT_EQ(pool.open_streams(), static_cast<size_t>(kStreams));
  for (int i = 0; i < kStreams; ++i) ASSERT_TRUE(Sink(i)->Send("sample", std::to_string(i) + "\nline 2"));
  ASSERT_TRUE(WaitFor([&] {
    for (auto& s : seen) {
      if (s->Count() < 2) return false;
    }
    return true;
  }));
  for (int i = 0; i < kStreams; ++i) Sink(i)->End();  // the source ends each stream
  ASSERT_TRUE(WaitFor([&] { return pool.open_streams() == 0; }));
  for (auto& s : seen) {
    std::lock_guard<std::mutex> lock(s->mu);
    ASSERT_EQ(s->events.size(), 2u);
    EXPECT_EQ(s->events[0].rfind("hello=n", 0), 0u) << s->events[0];
    EXPECT_EQ(s->events[1].find("\nline 2"), s->events[1].size() - 7) << s->events[1];
    EXPECT_EQ(s->how, Ending::kSourceEnded);
  }
}

TEST_F(EventStreamPoolTest, RefusedUnreachableAndFullAreSaid) {
  EventStreamPool pool(2, 2000, 0);
  Seen refused, unreachable, a;
  ASSERT_TRUE(Open(pool, "x", &refused, /*token=*/false).ok());
  ASSERT_TRUE(WaitFor([&] { return refused.Ended(); }));
  EXPECT_EQ(refused.how, Ending::kFailed);
  EXPECT_EQ(refused.error.code(), StatusCode::kUnauthenticated) << refused.error.ToString();
  EXPECT_NE(refused.error.message().find("no token"), std::string::npos) << refused.error.message();

  // Nothing listens on a port just freed.
  uint16_t dead_port = 0;
  {
    HttpServer other;
    auto p = other.Start();
    ASSERT_TRUE(p.ok());
    dead_port = *p;
  }
  ASSERT_TRUE(pool.Open(LocalUrl(dead_port, "/s/y"), {}, [](const std::string&, const std::string&) { return true; },
                        nullptr,
                        [&](Ending how, const Status& error) {
                          std::lock_guard<std::mutex> lock(unreachable.mu);
                          unreachable.how = how;
                          unreachable.error = error;
                        })
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return unreachable.Ended(); }));
  EXPECT_EQ(unreachable.how, Ending::kFailed);
  EXPECT_EQ(unreachable.error.code(), StatusCode::kUnavailable) << unreachable.error.ToString();

  // Two open at most: the third is refused at once.
  Seen b, c;
  ASSERT_TRUE(Open(pool, "a", &a).ok());
  ASSERT_TRUE(Open(pool, "b", &b).ok());
  auto third = Open(pool, "c", &c);
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(pool.Open(LocalUrl(port_, "/s/z"), {"X-Bad: a\r\nInjected: b"}, nullptr, nullptr, nullptr).ok());
}

TEST_F(EventStreamPoolTest, StoppedByItsReaderByCloseByStillWantedAndByThePool) {
  Seen by_reader, by_close, by_wanted, by_pool;
  std::atomic<bool> wanted{true};
  uint64_t close_id = 0;
  {
    EventStreamPool pool(8, 2000, 0);
    ASSERT_TRUE(Open(pool, "r", &by_reader, true, nullptr, /*stop_after=*/1).ok());
    auto id = Open(pool, "c", &by_close);
    ASSERT_TRUE(id.ok());
    close_id = *id;
    ASSERT_TRUE(Open(pool, "w", &by_wanted, true, [&] { return wanted.load(); }).ok());
    ASSERT_TRUE(Open(pool, "p", &by_pool).ok());
    ASSERT_TRUE(WaitFor([&] { return by_reader.Ended() && by_close.Count() == 1 && by_pool.Count() == 1; }));
    EXPECT_EQ(by_reader.how, Ending::kStopped);
    pool.Close(close_id);
    pool.Close(close_id + 1000);  // unknown: ignored
    ASSERT_TRUE(WaitFor([&] { return by_close.Ended(); }));
    EXPECT_EQ(by_close.how, Ending::kStopped);
    // A quiet source: the still_wanted check (every 250 ms or so) ends it.
    wanted = false;
    ASSERT_TRUE(WaitFor([&] { return by_wanted.Ended(); }, milliseconds(5000)));
    EXPECT_EQ(by_wanted.how, Ending::kStopped);
    EXPECT_FALSE(by_pool.Ended());
  }  // the pool's destruction ends the last one
  EXPECT_EQ(by_pool.how, Ending::kStopped);
  // The source sees its clients leave.
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(EventStreamPoolTest, ASourceThatGoesSilentEndsAfterTheIdleTimeout) {
  EventStreamPool pool(4, 2000, /*idle_timeout_ms=*/1000);
  Seen seen;
  ASSERT_TRUE(Open(pool, "quiet", &seen).ok());
  // The server's keep-alive comes every 15 s: nothing arrives after "hello" for 1 s.
  ASSERT_TRUE(WaitFor([&] { return seen.Ended(); }, milliseconds(4000)));
  EXPECT_EQ(seen.how, Ending::kFailed);
  EXPECT_EQ(seen.error.code(), StatusCode::kUnavailable) << seen.error.ToString();
  EXPECT_NE(seen.error.message().find("nothing arrived for 1000 ms"), std::string::npos) << seen.error.message();
}

}  // namespace
}  // namespace rota::net
