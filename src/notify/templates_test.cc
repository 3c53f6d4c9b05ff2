#include "notify/templates.h"

#include <gtest/gtest.h>

#include "notify/mime.h"

namespace rota::notify {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

ViolationNotice Notice() {
  ViolationNotice n;
  n.node = "node-a";
  n.gpu_index = 3;
  n.gpu_uuid = "GPU-1234";
  n.offender_user = "mallory";
  n.processes = {{4242, "python train.py --lr 0.1"}, {4243, "nvidia-smi"}};
  n.reservation_title = "Paper deadline";
  n.reservation_owner = "alice";
  n.reservation_start_ms = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
  n.reservation_end_ms = 1'700'003'600'000;
  n.next_action = "stop the processes";
  n.next_action_ms = 1'700'000'600'000;  // 22:23:20Z
  n.server_url = "https://rota.example.com/";
  n.violation_id = 77;
  return n;
}

TEST(HtmlEscapeTest, EscapesTheFiveCharacters) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">it's & </a>"),
            "&lt;a href=&quot;x&quot;&gt;it&#39;s &amp; &lt;/a&gt;");
}

TEST(TemplatesTest, OffenderNoticeSaysWhatWhereAndWhen) {
  Email e = RenderViolationForOffender(Notice());
  EXPECT_TRUE(e.to.empty());
  EXPECT_TRUE(Validate(Email{{"x@y.z"}, e.subject, e.text, e.html}).ok());
  EXPECT_TRUE(Contains(e.subject, "GPU 3")) << e.subject;
  EXPECT_TRUE(Contains(e.subject, "node-a")) << e.subject;
  for (const std::string* body : {&e.text, &e.html}) {
    EXPECT_TRUE(Contains(*body, "mallory")) << *body;
    EXPECT_TRUE(Contains(*body, "GPU-1234"));
    EXPECT_TRUE(Contains(*body, "4242"));
    EXPECT_TRUE(Contains(*body, "python train.py --lr 0.1"));
    EXPECT_TRUE(Contains(*body, "Paper deadline"));
    EXPECT_TRUE(Contains(*body, "2023-11-14T22:13:20Z .. 2023-11-14T23:13:20Z"));
    EXPECT_TRUE(Contains(*body, "stop the processes at 2023-11-14T22:23:20Z")) << *body;
    EXPECT_TRUE(Contains(*body, "https://rota.example.com/violations/77")) << *body;
    EXPECT_FALSE(Contains(*body, "dry-run"));
  }
}

TEST(TemplatesTest, OwnerNoticeNamesTheOffender) {
  Email e = RenderViolationForOwner(Notice());
  EXPECT_TRUE(Contains(e.subject, "mallory is using GPU 3 on node-a")) << e.subject;
  EXPECT_TRUE(Contains(e.subject, "Paper deadline"));
  EXPECT_TRUE(Contains(e.text, "has been asked to stop"));
  EXPECT_TRUE(Contains(e.html, "stop the processes at 2023-11-14T22:23:20Z"));
}

TEST(TemplatesTest, DryRunAndNoNextAction) {
  ViolationNotice n = Notice();
  n.dry_run = true;
  n.next_action = "";
  n.next_action_ms = 0;
  n.server_url = "";
  for (const Email& e : {RenderViolationForOffender(n), RenderViolationForOwner(n)}) {
    EXPECT_TRUE(Contains(e.subject, "(dry run)")) << e.subject;
    EXPECT_TRUE(Contains(e.text, "dry-run mode"));
    EXPECT_TRUE(Contains(e.text, "No further automatic action"));
    EXPECT_FALSE(Contains(e.text, "http")) << "no link without a server url";
    EXPECT_FALSE(Contains(e.html, "<a "));
  }
}

TEST(TemplatesTest, UserValuesAreHtmlEscaped) {
  ViolationNotice n = Notice();
  n.offender_user = "<script>alert('x')</script>";
  n.reservation_title = "\"quoted\" & <b>bold</b>";
  n.processes = {{1, "bash -c '<img src=x onerror=alert(1)>'"}};
  n.node = "n<1>";
  for (const Email& e : {RenderViolationForOffender(n), RenderViolationForOwner(n)}) {
    EXPECT_FALSE(Contains(e.html, "<script>")) << e.html;
    EXPECT_FALSE(Contains(e.html, "<img"));
    EXPECT_FALSE(Contains(e.html, "<b>bold"));
    EXPECT_FALSE(Contains(e.html, "'x'"));
    EXPECT_TRUE(Contains(e.html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;")) << e.html;
    EXPECT_TRUE(Contains(e.html, "&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"));
    EXPECT_TRUE(Contains(e.html, "n&lt;1&gt;"));
    // The text part carries the values verbatim (it is not HTML).
    EXPECT_TRUE(Contains(e.text, "<script>alert('x')</script>"));
  }
}

TEST(TemplatesTest, HostileValuesCannotBreakHeadersOrLinks) {
  ViolationNotice n = Notice();
  n.node = "node\r\nBcc: victim@example.org";
  n.reservation_title = std::string(500, 't') + "\xC3";  // long, invalid UTF-8 tail
  n.server_url = "javascript:alert(1)";
  for (const Email& e : {RenderViolationForOffender(n), RenderViolationForOwner(n)}) {
    Status st = Validate(Email{{"x@y.z"}, e.subject, e.text, e.html});
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_FALSE(Contains(e.subject, "\n"));
    EXPECT_LT(e.subject.size(), 250u) << e.subject;
    EXPECT_FALSE(Contains(e.html, "javascript:"));
    EXPECT_FALSE(Contains(e.text, "node\r\nBcc"));
  }
}

TEST(TemplatesTest, UnicodeSubjectIsEncodedForTheHeader) {
  ViolationNotice n = Notice();
  n.node =
      "kn\xC3\xB6"
      "del-\xE2\x9C\x93";
  Email e = RenderViolationForOffender(n);
  EXPECT_TRUE(Contains(e.subject,
                       "kn\xC3\xB6"
                       "del-\xE2\x9C\x93"))
      << e.subject;
  std::string header = EncodeHeaderText(e.subject);
  EXPECT_EQ(header.rfind("=?UTF-8?B?", 0), 0u) << header;
  for (char c : header) EXPECT_TRUE(static_cast<unsigned char>(c) < 0x80) << header;
}

TEST(TemplatesTest, ProcessListIsCapped) {
  ViolationNotice n = Notice();
  n.processes.clear();
  for (int i = 0; i < 25; ++i) n.processes.emplace_back(1000 + i, "p" + std::to_string(i));
  Email e = RenderViolationForOffender(n);
  EXPECT_TRUE(Contains(e.text, "pid 1019"));
  EXPECT_FALSE(Contains(e.text, "pid 1020"));
  EXPECT_TRUE(Contains(e.text, "and 5 more"));
}

TEST(TemplatesTest, IdleReservationNotice) {
  IdleReservationNotice n;
  n.reservation_id = 42;
  n.title = "<Big> run";
  n.owner = "alice";
  n.node = "node-b";
  n.gpus = {0, 1};
  n.idle_since_ms = 1'700'000'000'000;
  n.avg_util = 1.25;
  n.will_release_ms = 1'700'007'200'000;
  n.server_url = "http://rota.local:8080";
  Email e = RenderIdleReservation(n);
  EXPECT_EQ(e.subject,
            "[rota] Your reservation \"<Big> run\" on node-b is idle and will be released");
  for (const std::string* body : {&e.text, &e.html}) {
    EXPECT_TRUE(Contains(*body, "GPUs 0, 1"));
    EXPECT_TRUE(Contains(*body, "idle since 2023-11-14T22:13:20Z"));
    EXPECT_TRUE(Contains(*body, "1.2 %") || Contains(*body, "1.3 %")) << *body;
    EXPECT_TRUE(Contains(*body, "release it automatically at 2023-11-15T00:13:20Z"));
    EXPECT_TRUE(Contains(*body, "http://rota.local:8080/reservations/42"));
  }
  EXPECT_TRUE(Contains(e.html, "&lt;Big&gt; run"));
  EXPECT_FALSE(Contains(e.html, "<Big>"));

  n.will_release_ms = 0;
  n.gpus = {5};
  e = RenderIdleReservation(n);
  EXPECT_EQ(e.subject, "[rota] Your reservation \"<Big> run\" on node-b is idle");
  EXPECT_TRUE(Contains(e.text, "GPU 5)"));
  EXPECT_TRUE(Contains(e.text, "will not be released automatically"));
  EXPECT_TRUE(Contains(e.text, "please release it"));

  // Released already: says so, with no promise of a future release.
  n.released_ms = 1'700'003'600'000;
  e = RenderIdleReservation(n);
  EXPECT_EQ(e.subject,
            "[rota] Your reservation \"<Big> run\" on node-b was idle and has been released");
  for (const std::string* body : {&e.text, &e.html}) {
    EXPECT_TRUE(Contains(*body, "rota released it at 2023-11-14T23:13:20Z")) << *body;
    EXPECT_FALSE(Contains(*body, "will release")) << *body;
    EXPECT_FALSE(Contains(*body, "will not be released")) << *body;
    EXPECT_FALSE(Contains(*body, "please release it")) << *body;
  }
}

}  // namespace
}  // namespace rota::notify
