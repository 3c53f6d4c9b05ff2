// Server bookkeeping without sockets: Outbox, SessionLink (with a fake Session), ConnectionSlot
// and event formatting.

#include "net/server_state.h"

#include <gtest/gtest.h>

#include "net/http_client.h"
#include "net/outbox.h"

namespace rota::net::internal {
namespace {

TEST(OutboxTest, WriterProtocolAndBound) {
  Outbox box(10);
  EXPECT_EQ(box.Push("abc"), Outbox::PushResult::kQueuedStartWriter);
  EXPECT_EQ(box.Push("def"), Outbox::PushResult::kQueued);  // writer already busy
  std::string m;
  ASSERT_TRUE(box.Pop(&m));
  EXPECT_EQ(m, "abc");
  ASSERT_TRUE(box.Pop(&m));
  EXPECT_EQ(m, "def");
  EXPECT_FALSE(box.Pop(&m));                                                  // writer now idle
  EXPECT_EQ(box.Push("1234567890"), Outbox::PushResult::kQueuedStartWriter);  // exactly 10
  EXPECT_EQ(box.Push("x"), Outbox::PushResult::kOverflow);                    // 11 > 10: closes
  EXPECT_TRUE(box.closed());
  EXPECT_EQ(box.Push("y"), Outbox::PushResult::kClosed);
  EXPECT_FALSE(box.Pop(&m));
  EXPECT_EQ(box.queued_bytes(), 0u);
}

TEST(OutboxTest, StartsBusyAndSealKeepsQueue) {
  Outbox box(100, /*writer_busy=*/true);
  EXPECT_EQ(box.Push("a"), Outbox::PushResult::kQueued);
  box.Seal();
  EXPECT_TRUE(box.closed());
  EXPECT_EQ(box.Push("b"), Outbox::PushResult::kClosed);
  std::string m;
  ASSERT_TRUE(box.Pop(&m));  // sealed: queued messages still drain
  EXPECT_EQ(m, "a");
  EXPECT_FALSE(box.Pop(&m));
  EXPECT_TRUE(box.Close());  // sealed is not closed: Close still drops and reports it
}

class FakeSession : public Session {
 public:
  void Shutdown() override { ++shutdowns; }
  void CloseWith(int code, std::string reason) override {
    last_code = code;
    last_reason = std::move(reason);
  }
  void Kick() override { ++kicks; }
  void Detach() override {}
  int shutdowns = 0;
  int kicks = 0;
  int last_code = 0;
  std::string last_reason;
};

TEST(SessionLinkTest, KicksOnceOverflowClosesDetachStops) {
  auto session = std::make_shared<FakeSession>();
  SessionLink link(8, /*writer_busy=*/false, "1.2.3.4:5");
  link.Bind(session);
  EXPECT_TRUE(link.Push("aaaa", 1008));
  EXPECT_TRUE(link.Push("bbbb", 1008));
  EXPECT_EQ(session->kicks, 1);
  EXPECT_FALSE(link.Push("c", 1008));  // 9 > 8
  EXPECT_EQ(session->last_code, 1008);
  EXPECT_FALSE(link.is_open());

  SessionLink link2(100, false, "r");
  link2.Bind(session);
  link2.RequestClose(1000, "bye");
  EXPECT_EQ(session->last_code, 1000);
  EXPECT_EQ(session->last_reason, "bye");
  link2.Detach();
  EXPECT_FALSE(link2.Push("x", 1008));
  session->last_code = 0;
  link2.RequestClose(1000, "again");
  EXPECT_EQ(session->last_code, 0);  // detached: the session is not touched
  EXPECT_EQ(link2.remote(), "r");
}

TEST(SessionLinkTest, SessionGoneMeansNoCalls) {
  SessionLink link(100, false, "r");
  {
    auto session = std::make_shared<FakeSession>();
    link.Bind(session);
  }
  EXPECT_TRUE(link.Push("x", 1008));  // queued; nobody to kick, nothing crashes
}

TEST(ConnectionSlotTest, CountsAndLimits) {
  HttpServerOptions o;
  o.max_connections = 2;
  auto state = std::make_shared<ServerState>(o);
  ConnectionSlot a = ConnectionSlot::Acquire(state);
  ConnectionSlot b = ConnectionSlot::Acquire(state);
  ConnectionSlot c = ConnectionSlot::Acquire(state);
  auto counts = [&state] {
    MutexLock lock(&state->mu);
    return std::make_pair(state->connections, state->live.size());
  };
  EXPECT_TRUE(a.valid());
  EXPECT_TRUE(b.valid());
  EXPECT_FALSE(c.valid());
  EXPECT_EQ(counts().first, 2);
  ConnectionSlot moved = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(counts().first, 2);
  auto session = std::make_shared<FakeSession>();
  moved.Attach(session);
  EXPECT_EQ(counts().second, 1u);
  moved.Release();
  EXPECT_EQ(counts().first, 1);
  EXPECT_EQ(counts().second, 0u);
  state->stopping = true;
  ConnectionSlot d = ConnectionSlot::Acquire(state);
  d.Attach(session);
  EXPECT_EQ(session->shutdowns, 1);  // attached while stopping: shut down at once
}

// Bad inputs tried: CR/LF inside the event name, CRLF line ends in the data.
TEST(FormatEventTest, RoundTripsThroughTheParser) {
  EXPECT_EQ(FormatEvent("", "x"), "data: x\n\n");
  EXPECT_EQ(FormatEvent("a\r\nb", "1\r\n2\n"), "event: a  b\ndata: 1\ndata: 2\ndata: \n\n");
  EventStreamParser p;
  std::vector<std::pair<std::string, std::string>> got;
  p.Feed(FormatEvent("node", "{\"a\":1}\nsecond") + FormatEvent("", ""),
         [&](const std::string& e, const std::string& d) {
           got.emplace_back(e, d);
           return true;
         });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::string("node"), std::string("{\"a\":1}\nsecond")));
  EXPECT_EQ(got[1], std::make_pair(std::string("message"), std::string("")));
}

}  // namespace
}  // namespace rota::net::internal
