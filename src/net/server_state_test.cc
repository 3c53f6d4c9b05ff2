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

// A flood from one address, or of API connections from many, cannot take the slots of
// agents (WebSocket sessions): per-address and non-WebSocket budgets.
TEST(ConnectionSlotTest, OneAddressOrApiClientsCannotTakeTheAgentsSlots) {
  HttpServerOptions o;
  o.max_connections = 6;
  o.reserved_websocket_connections = 2;
  o.max_connections_per_address = 2;
  auto state = std::make_shared<ServerState>(o);
  std::string why;
  ConnectionSlot a1 = ConnectionSlot::Acquire(state, "10.0.0.1");
  ConnectionSlot a2 = ConnectionSlot::Acquire(state, "10.0.0.1");
  ConnectionSlot a3 = ConnectionSlot::Acquire(state, "10.0.0.1", &why);
  EXPECT_TRUE(a1.valid() && a2.valid());
  EXPECT_FALSE(a3.valid());
  EXPECT_NE(why.find("from 10.0.0.1"), std::string::npos) << why;
  // An upgraded agent leaves its address's budget: the address may open another.
  a1.PromoteToWebSocket();
  a1.PromoteToWebSocket();  // idempotent
  ConnectionSlot a4 = ConnectionSlot::Acquire(state, "10.0.0.1");
  EXPECT_TRUE(a4.valid());
  // Non-WebSocket connections: 6 - 2 reserved = 4 at most (a2, a4, b1, b2).
  ConnectionSlot b1 = ConnectionSlot::Acquire(state, "10.0.0.2");
  ConnectionSlot b2 = ConnectionSlot::Acquire(state, "127.0.0.1");
  ConnectionSlot b3 = ConnectionSlot::Acquire(state, "10.0.0.3", &why);
  EXPECT_TRUE(b1.valid() && b2.valid());
  EXPECT_FALSE(b3.valid());
  EXPECT_NE(why.find("kept for agents"), std::string::npos) << why;
  // Loopback is exempt from the per-address limit (within the other budgets).
  b1.Release();
  ConnectionSlot l1 = ConnectionSlot::Acquire(state, "127.0.0.1");
  EXPECT_TRUE(l1.valid());
  // Releasing a promoted slot frees the WebSocket count, and a moved slot keeps its address.
  ConnectionSlot moved = std::move(a2);
  moved.Release();
  a1.Release();
  {
    MutexLock lock(&state->mu);
    EXPECT_EQ(state->websockets, 0);
    EXPECT_EQ(state->connections, 3);  // a4, b2, l1
    EXPECT_EQ(state->per_address["10.0.0.1"], 1);
    EXPECT_EQ(state->per_address.count("127.0.0.1"), 0u);
  }
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
