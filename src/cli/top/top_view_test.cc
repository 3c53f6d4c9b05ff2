#include "cli/top/top_view.h"

#include <gtest/gtest.h>

namespace rota::cli::top {
namespace {

// A cluster of `n` nodes named gpu-1..gpu-n with `gpus` GPUs each; node i's GPUs run at
// (i * 7) % 101 percent, GPU 0 of every third node has alice's process.
Model Cluster(int n, int gpus = 8) {
  Model m;
  m.server = "http://127.0.0.1:8080";
  m.now_ms = 1'800'000'000'000;
  for (int i = 1; i <= n; ++i) {
    const std::string name = "gpu-" + std::to_string(i);
    api::Json node = {{"name", name}, {"state", i == 2 ? "down" : "ready"}};
    api::Json sample = {{"node", name},
                        {"host", {{"cpu_percent", 12.5}, {"mem_total_bytes", 64ull << 30},
                                  {"mem_available_bytes", 48ull << 30}, {"load1", 1.25}}},
                        {"gpus", api::Json::array()}};
    for (int g = 0; g < gpus; ++g) {
      api::Json gpu = {{"index", g}, {"name", "Tesla T4"}, {"state", "ok"},
                       {"util_gpu_pct", (i * 7) % 101}, {"memory_used_bytes", 1ull << 30},
                       {"memory_total_bytes", 16ull << 30}, {"temperature_c", 55},
                       {"power_mw", 60000}, {"users", api::Json::array()},
                       {"processes", api::Json::array()}};
      if (g == 0 && i % 3 == 0) {
        gpu["users"].push_back("alice");
        gpu["processes"].push_back({{"pid", 4242}, {"command", "python train.py"}});
      }
      sample["gpus"].push_back(gpu);
    }
    m.nodes.emplace(name, NodeFromEvents(name, node, sample));
  }
  return m;
}

// Rendered without escapes, so lines can be compared as text.
std::vector<std::string> Plain(const Model& m, View& v, int rows, int cols) {
  return Render(m, v, rows, cols, /*color=*/false);
}

// The first list line (after the header) and how many list lines there are.
size_t ListStart(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("NODE", 0) == 0) return i + 1;
  }
  return lines.size();
}

void Press(View& v, const Model& m, int rows, std::string_view bytes) {
  for (const Key& k : ParseKeys(bytes)) ApplyKey(v, k, m, rows);
}

TEST(TopView, HundredNodesFitFiftyRowsWithHeaderTotalsAndFooter) {
  Model m = Cluster(100);
  View v;
  auto lines = Render(m, v, 50, 100);
  ASSERT_EQ(lines.size(), 50u);
  for (const auto& l : lines) EXPECT_LE(DisplayWidth(l), 100) << l;
  auto plain = Plain(m, v, 50, 100);
  EXPECT_EQ(plain[0].rfind("rota top", 0), 0u) << plain[0];
  EXPECT_NE(plain[1].find("Nodes 100: 99 ready, 1 down"), std::string::npos) << plain[1];
  EXPECT_NE(plain[1].find("GPUs 800: 33 busy, 767 free"), std::string::npos) << plain[1];
  EXPECT_NE(plain[1].find("power 48.0kW"), std::string::npos) << plain[1];
  EXPECT_NE(plain[2].find("sign in"), std::string::npos);
  const size_t start = ListStart(plain);
  ASSERT_EQ(start, 4u);
  // 50 rows - title, totals, jobs, header, footer: 45 node lines, in natural order.
  EXPECT_EQ(plain[start].rfind("gpu-1 ", 0), 0u) << plain[start];
  EXPECT_EQ(plain[start + 1].rfind("gpu-2 ", 0), 0u) << plain[start + 1];
  EXPECT_EQ(plain[start + 44].rfind("gpu-45 ", 0), 0u) << plain[start + 44];
  EXPECT_NE(plain[49].find("q quit"), std::string::npos) << plain[49];
  EXPECT_NE(plain[49].find("1-45/100"), std::string::npos) << plain[49];
  // A GPU map character per GPU: gpu-3 runs at 21 % (':'), alice's process makes one busy.
  const std::string& gpu3 = plain[start + 2];
  EXPECT_NE(gpu3.find("[::::::::]"), std::string::npos) << gpu3;
  EXPECT_NE(gpu3.find(" 1/8 "), std::string::npos) << gpu3;
  EXPECT_NE(plain[start + 1].find("down"), std::string::npos) << plain[start + 1];
}

TEST(TopView, ThreeNodesLeaveTheRestBlankAndKeepTheFooterLast) {
  Model m = Cluster(3, 2);
  View v;
  auto plain = Plain(m, v, 50, 80);
  ASSERT_EQ(plain.size(), 50u);
  const size_t start = ListStart(plain);
  EXPECT_EQ(plain[start + 2].rfind("gpu-3 ", 0), 0u);
  EXPECT_EQ(plain[start + 3], "");
  EXPECT_NE(plain[49].find("1-3/3"), std::string::npos) << plain[49];
}

TEST(TopView, SmallAndNarrowTerminalsGetExactlyTheirSize) {
  Model m = Cluster(12);
  for (auto [rows, cols] : {std::pair{3, 40}, std::pair{1, 10}, std::pair{8, 20}, std::pair{24, 80}}) {
    View v;
    auto lines = Render(m, v, rows, cols);
    ASSERT_EQ(static_cast<int>(lines.size()), rows);
    for (const auto& l : lines) EXPECT_LE(DisplayWidth(l), cols) << rows << "x" << cols << ": " << l;
  }
  View v;
  EXPECT_TRUE(Render(m, v, 0, 80).empty());
}

TEST(TopView, KeysAreParsedFromTerminalBytes) {
  auto keys = ParseKeys("\x1b[B\x1b[A\x1b[6~\x1b[5~\x1bOH\x1b[4~j\r\x7f\x1b");
  std::vector<KeyCode> codes;
  for (const auto& k : keys) codes.push_back(k.code);
  EXPECT_EQ(codes, (std::vector<KeyCode>{KeyCode::kDown, KeyCode::kUp, KeyCode::kPageDown, KeyCode::kPageUp,
                                         KeyCode::kHome, KeyCode::kEnd, KeyCode::kChar, KeyCode::kEnter,
                                         KeyCode::kBackspace, KeyCode::kEscape}));
  EXPECT_EQ(keys[6].ch, 'j');
  EXPECT_TRUE(ParseKeys("\x1b[").empty());       // incomplete: dropped
  EXPECT_TRUE(ParseKeys("\x1b[99Z").empty());    // unknown: dropped
}

TEST(TopView, PagingMovesTheSelectionAndTheListFollows) {
  Model m = Cluster(100);
  View v;
  Press(v, m, 50, "\x1b[6~");  // page down: 45 lines
  EXPECT_EQ(v.selected, 45);
  auto plain = Plain(m, v, 50, 100);
  EXPECT_NE(plain[49].find("2-46/100"), std::string::npos) << plain[49];
  EXPECT_EQ(plain[ListStart(plain) + 44].rfind("gpu-46 ", 0), 0u);
  Press(v, m, 50, "G");
  plain = Plain(m, v, 50, 100);
  EXPECT_EQ(v.selected, 99);
  EXPECT_NE(plain[49].find("56-100/100"), std::string::npos) << plain[49];
  Press(v, m, 50, "kkg");
  EXPECT_EQ(v.selected, 0);
  plain = Plain(m, v, 50, 100);
  EXPECT_NE(plain[49].find("1-45/100"), std::string::npos);
  Press(v, m, 50, "\x1b[A");  // above the first line: stays
  EXPECT_EQ(v.selected, 0);
}

TEST(TopView, EnterExpandsANodeIntoItsGpusAndFoldsItAgain) {
  Model m = Cluster(6);
  View v;
  Press(v, m, 50, "jj\r");  // gpu-3
  EXPECT_EQ(v.selected, 2);
  auto plain = Plain(m, v, 50, 120);
  const size_t start = ListStart(plain);
  EXPECT_EQ(plain[start + 2].rfind("gpu-3 ", 0), 0u);
  for (int g = 0; g < 8; ++g) {
    const std::string& line = plain[start + 3 + static_cast<size_t>(g)];
    EXPECT_EQ(line.rfind("  " + std::string(g < 10 ? "  " : " ") + std::to_string(g) + " Tesla T4", 0), 0u) << line;
  }
  EXPECT_NE(plain[start + 3].find("alice"), std::string::npos) << plain[start + 3];
  EXPECT_NE(plain[start + 3].find("4242 python train.py"), std::string::npos) << plain[start + 3];
  EXPECT_NE(plain[start + 3].find("21%]"), std::string::npos) << plain[start + 3];
  EXPECT_EQ(plain[start + 11].rfind("gpu-4 ", 0), 0u);
  Press(v, m, 50, "j");  // onto a GPU line; Enter folds its node and selects the node's line
  Press(v, m, 50, "\r");
  EXPECT_EQ(v.selected, 2);
  plain = Plain(m, v, 50, 120);
  EXPECT_EQ(plain[start + 3].rfind("gpu-4 ", 0), 0u);
  Press(v, m, 50, "a");  // every node
  plain = Plain(m, v, 50, 120);
  EXPECT_NE(plain[49].find("/54"), std::string::npos) << plain[49];
}

TEST(TopView, FilterBySubstringOrGpuUserAndEscClearsIt) {
  Model m = Cluster(100);
  View v;
  Press(v, m, 50, "/gpu-1");
  auto plain = Plain(m, v, 50, 100);
  EXPECT_NE(plain[49].find("Filter: gpu-1_"), std::string::npos) << plain[49];
  Press(v, m, 50, "\r");
  plain = Plain(m, v, 50, 100);
  // gpu-1, gpu-10..gpu-19, gpu-100
  EXPECT_NE(plain[49].find("1-12/12"), std::string::npos) << plain[49];
  EXPECT_NE(plain[49].find("filter:gpu-1"), std::string::npos) << plain[49];
  Press(v, m, 50, "/\x7f\x7f\x7f\x7f\x7f" "alice\r");
  plain = Plain(m, v, 50, 100);
  EXPECT_NE(plain[49].find("1-33/33"), std::string::npos) << plain[49];  // every third node
  Press(v, m, 50, "/zzz\r");
  plain = Plain(m, v, 50, 100);
  EXPECT_NE(plain[ListStart(plain)].find("no node matches"), std::string::npos);
  Press(v, m, 50, "\x1b");
  EXPECT_TRUE(v.filter.empty());
  Press(v, m, 50, "/abc\x1b");  // Esc while typing cancels the draft
  EXPECT_TRUE(v.filter.empty());
  EXPECT_FALSE(v.editing_filter);
  Press(v, m, 50, "/q");  // q while typing is text, not quit
  EXPECT_FALSE(v.quit);
  Press(v, m, 50, "\r");
  Press(v, m, 50, "q");
  EXPECT_TRUE(v.quit);
}

TEST(TopView, SortCyclesAndPutsTheBusiestFirst) {
  Model m = Cluster(20);
  View v;
  Press(v, m, 50, "s");
  EXPECT_EQ(v.sort, SortKey::kUtil);
  auto plain = Plain(m, v, 50, 100);
  // (i * 7) % 101 is highest at i = 14 (98 %) among 1..20.
  EXPECT_EQ(plain[ListStart(plain)].rfind("gpu-14 ", 0), 0u) << plain[ListStart(plain)];
  EXPECT_NE(plain[49].find("sort:utilisation"), std::string::npos);
  Press(v, m, 50, "sss");
  EXPECT_EQ(v.sort, SortKey::kState);
  plain = Plain(m, v, 50, 100);
  EXPECT_EQ(plain[ListStart(plain)].rfind("gpu-2 ", 0), 0u);  // the down node first
  Press(v, m, 50, "s");
  EXPECT_EQ(v.sort, SortKey::kName);
}

TEST(TopView, MyJobsTakeAtMostAThirdAndSayHowManyMore) {
  Model m = Cluster(10);
  m.user = "alice";
  m.jobs_known = true;
  api::Json list = {{"jobs", api::Json::array()}};
  for (int i = 1; i <= 20; ++i) {
    list["jobs"].push_back({{"id", i}, {"name", "train-" + std::to_string(i)},
                            {"state", i % 4 == 0 ? "pending" : i % 5 == 0 ? "succeeded" : "running"},
                            {"tasks", {{{"node", "gpu-1"}, {"gpus", {0, 1}}}, {{"node", "gpu-2"}, {"gpus", {3}}}}}});
  }
  m.jobs = JobsFromList(list);
  ASSERT_EQ(m.jobs.size(), 17u);  // finished ones are left out
  EXPECT_EQ(m.jobs.front().state, "running");
  EXPECT_EQ(m.jobs.back().state, "pending");
  EXPECT_EQ(m.jobs.front().gpus, 3);
  EXPECT_EQ(m.jobs.front().nodes, "gpu-1,gpu-2");
  View v;
  auto plain = Plain(m, v, 30, 100);
  ASSERT_EQ(plain.size(), 30u);
  EXPECT_NE(plain[0].find("user alice"), std::string::npos);
  EXPECT_NE(plain[2].find("My jobs: 12 running, 5 pending"), std::string::npos) << plain[2];
  EXPECT_EQ(plain[3].rfind("  #1 ", 0), 0u) << plain[3];
  EXPECT_NE(plain[3].find("3 GPUs"), std::string::npos) << plain[3];
  EXPECT_NE(plain[11].find("9 more"), std::string::npos) << plain[11];  // (30 - 6) / 3 = 8 shown
  EXPECT_EQ(ListStart(plain), 13u);
  EXPECT_NE(plain[29].find("1-10/10"), std::string::npos) << plain[29];
}

TEST(TopView, EventsWithMissingOrMistypedFieldsLeaveThemUnset) {
  api::Json sample = {{"host", {{"cpu_percent", "high"}, {"mem_total_bytes", -5}}},
                      {"gpus", {1, {{"util_gpu_pct", "x"}, {"processes", {{{"pid", "p"}}, 7}}}, {{"index", 3}}}}};
  Node n = NodeFromEvents("x", api::Json(), sample);
  EXPECT_EQ(n.state, "-");
  EXPECT_FALSE(n.cpu_pct.has_value());
  EXPECT_FALSE(n.mem_total.has_value());
  ASSERT_EQ(n.gpus.size(), 2u);
  EXPECT_FALSE(n.gpus[0].util_pct.has_value());
  EXPECT_EQ(n.gpus[0].processes, std::vector<std::string>{"0"});
  EXPECT_EQ(n.gpus[1].index, 3);
  EXPECT_FALSE(n.MeanUtil().has_value());
  Model m;
  m.nodes.emplace("x", n);
  View v;
  auto plain = Plain(m, v, 10, 80);
  EXPECT_NE(plain[ListStart(plain)].find("[??]"), std::string::npos) << plain[ListStart(plain)];
  EXPECT_TRUE(JobsFromList(api::Json("nope")).empty());
  EXPECT_TRUE(JobsFromList({{"jobs", {1, "a", {{"state", 5}}}}}).empty());
}

TEST(TopView, HelpShowsTheKeysAndAnyKeyClosesIt) {
  Model m = Cluster(3);
  View v;
  Press(v, m, 30, "?");
  auto plain = Plain(m, v, 30, 100);
  EXPECT_EQ(plain[ListStart(plain)], "Keys");
  Press(v, m, 30, "j");
  EXPECT_FALSE(v.help);
  EXPECT_EQ(v.selected, 0);  // the key only closed the help
}

}  // namespace
}  // namespace rota::cli::top
