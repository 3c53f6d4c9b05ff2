#include "host/proc_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rota::host {
namespace {

using namespace std::string_literals;  // "a\0b"s keeps the NUL

// A /proc/<pid>/stat line with the given comm and counters; other fields are plausible.
std::string StatLine(const std::string& comm, uint64_t utime, uint64_t stime, uint64_t start) {
  return "4242 (" + comm + ") S 1 4242 4242 0 -1 4194304 100 0 0 0 " + std::to_string(utime) + " " +
         std::to_string(stime) + " 0 0 20 0 1 0 " + std::to_string(start) +
         " 3133440 388 18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4 5 6 7 8 9 "
         "10 0\n";
}

TEST(ParseProcStatTest, ReadsTotalCoresAndBtime) {
  auto r = ParseProcStat(
      "cpu  100 1 50 800 10 5 6 30 7 0\n"
      "cpu0 60 1 30 400 5 2 3 15 7 0\n"
      "cpu2 40 0 20 400 5 3 3 15 0 0\n"
      "intr 1 2 3\n"
      "ctxt 99\n"
      "btime 1700000000\n"
      "processes 5\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total.user, 100u);
  EXPECT_EQ(r->total.nice, 1u);
  EXPECT_EQ(r->total.system, 50u);
  EXPECT_EQ(r->total.idle, 800u);
  EXPECT_EQ(r->total.iowait, 10u);
  EXPECT_EQ(r->total.irq, 5u);
  EXPECT_EQ(r->total.softirq, 6u);
  EXPECT_EQ(r->total.steal, 30u);
  ASSERT_EQ(r->cores.size(), 2u);
  EXPECT_EQ(r->cores[0].first, 0u);
  EXPECT_EQ(r->cores[0].second.user, 60u);
  EXPECT_EQ(r->cores[1].first, 2u);  // offline cpu1 has no line
  EXPECT_EQ(r->cores[1].second.idle, 400u);
  EXPECT_EQ(r->btime_s, 1700000000);
}

TEST(ParseProcStatTest, AcceptsOldKernelsWithFourCounters) {
  auto r = ParseProcStat("cpu 1 2 3 4\ncpu0 1 2 3 4\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total.idle, 4u);
  EXPECT_EQ(r->total.steal, 0u);
  EXPECT_FALSE(r->btime_s.has_value());
}

// Bad inputs tried: empty file, no "cpu " line, garbage counter, negative counter,
// overflowing counter, truncated line (< 4 counters), bad cpuN name, garbage btime.
TEST(ParseProcStatTest, RejectsJunk) {
  struct Case {
    const char* name;
    std::string text;
    std::string error;  // substring of the message
  };
  const std::vector<Case> cases = {
      {"empty", "", "no \"cpu\" line"},
      {"only cores", "cpu0 1 2 3 4\n", "no \"cpu\" line"},
      {"garbage counter", "cpu 1 2 x 4\n", "bad counter \"x\""},
      {"negative counter", "cpu 1 -2 3 4\n", "bad counter \"-2\""},
      {"overflow", "cpu 1 2 3 99999999999999999999999\n", "bad counter"},
      {"truncated", "cpu  100 0 5", "3 counters, need at least 4"},
      {"truncated core", "cpu 1 2 3 4\ncpu0 1 2\n", "line cpu0: 2 counters"},
      {"bad core name", "cpu 1 2 3 4\ncpu0x 1 2 3 4\n", "bad cpu line name \"cpu0x\""},
      {"garbage btime", "cpu 1 2 3 4\nbtime soon\n", "bad btime \"soon\""},
      {"empty btime", "cpu 1 2 3 4\nbtime\n", "bad btime"},
  };
  for (const Case& c : cases) {
    auto r = ParseProcStat(c.text);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(r.status().message().find(c.error), std::string::npos)
        << c.name << ": " << r.status().message();
  }
}

TEST(CpuBusyPercentTest, Table) {
  struct Case {
    const char* name;
    CpuTimes prev, cur;
    double want;
  };
  // Field order: user nice system idle iowait irq softirq steal.
  const std::vector<Case> cases = {
      {"since boot", {}, {25, 0, 0, 75, 0, 0, 0, 0}, 25},
      {"all busy kinds", {}, {10, 10, 10, 60, 0, 5, 3, 2}, 40},
      {"iowait is idle", {}, {50, 0, 0, 25, 25, 0, 0, 0}, 50},
      {"delta", {100, 0, 100, 800, 0, 0, 0, 0}, {160, 0, 120, 810, 10, 0, 0, 0}, 80},
      {"no time passed", {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8}, 0},
      {"all counters backwards",
       {100, 100, 100, 100, 100, 100, 100, 100},
       {1, 1, 1, 1, 1, 1, 1, 1},
       0},
      {"iowait backwards only", {100, 0, 0, 100, 50, 0, 0, 0}, {150, 0, 0, 150, 40, 0, 0, 0}, 50},
      {"idle backwards only", {100, 0, 0, 100, 0, 0, 0, 0}, {150, 0, 0, 90, 0, 0, 0, 0}, 100},
  };
  for (const Case& c : cases) {
    double got = CpuBusyPercent(c.prev, c.cur);
    EXPECT_DOUBLE_EQ(got, c.want) << c.name;
    EXPECT_GE(got, 0) << c.name;
    EXPECT_LE(got, 100) << c.name;
  }
}

TEST(ParseMeminfoTest, ReadsTotalAndAvailable) {
  auto r = ParseMeminfo(
      "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n"
      "HugePages_Total:       0\nHugepagesize:       2048 kB\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total_bytes, 16384u * 1024);
  EXPECT_EQ(r->available_bytes, 8192u * 1024);
}

TEST(ParseMeminfoTest, FallsBackWithoutMemAvailable) {
  auto r = ParseMeminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->available_bytes, 420u * 1024);
}

TEST(ParseMeminfoTest, ClampsAvailableToTotal) {
  auto r = ParseMeminfo("MemTotal: 1000 kB\nMemAvailable: 2000 kB\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->available_bytes, r->total_bytes);
}

// Bad inputs tried: empty file, MemTotal missing, MemTotal 0, MemAvailable and the
// fallback fields missing, garbage value, negative value, missing value, unknown unit,
// a kB value that overflows 64 bits in bytes.
TEST(ParseMeminfoTest, RejectsJunk) {
  struct Case {
    const char* name;
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"empty", "", "MemTotal missing"},
      {"no MemTotal", "MemFree: 1 kB\nMemAvailable: 1 kB\n", "MemTotal missing"},
      {"MemTotal 0", "MemTotal: 0 kB\nMemAvailable: 0 kB\n", "MemTotal is 0"},
      {"no MemAvailable", "MemTotal: 10 kB\nMemFree: 1 kB\n", "MemAvailable missing"},
      {"garbage", "MemTotal: lots kB\n", "MemTotal: bad value \"lots\""},
      {"negative", "MemTotal: 10 kB\nMemAvailable: -5 kB\n", "MemAvailable: bad value"},
      {"no value", "MemTotal:\n", "MemTotal: bad value"},
      {"unit", "MemTotal: 10 MB\nMemAvailable: 1 kB\n", "unknown unit \"MB\""},
      {"overflow", "MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n", "too large"},
  };
  for (const Case& c : cases) {
    auto r = ParseMeminfo(c.text);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(c.error), std::string::npos)
        << c.name << ": " << r.status().message();
  }
}

TEST(ParseLoadavgTest, ReadsThreeLoads) {
  auto r = ParseLoadavg("0.50 1.25 12.00 1/87 4272\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->load1, 0.5);
  EXPECT_DOUBLE_EQ(r->load5, 1.25);
  EXPECT_DOUBLE_EQ(r->load15, 12.0);
}

// Bad inputs tried: empty, truncated (two values), garbage, negative, nan, inf.
TEST(ParseLoadavgTest, RejectsJunk) {
  for (const char* text : {"", "0.5 1.0", "a b c", "-1 0 0", "nan 0 0", "0 inf 0", "0 0 1e999"}) {
    auto r = ParseLoadavg(text);
    EXPECT_FALSE(r.ok()) << "\"" << text << "\"";
  }
}

TEST(ParsePidStatTest, CommWithSpacesAndParens) {
  for (const std::string comm : {"sleep", "my prog", "a) (b", ") S 1 2 3 (", "((", "))", ""}) {
    auto r = ParsePidStat(StatLine(comm, 11, 22, 12345));
    ASSERT_TRUE(r.ok()) << "comm \"" << comm << "\": " << r.status().ToString();
    EXPECT_EQ(r->rss_pages, 388u);
    EXPECT_EQ(r->comm, comm);
    EXPECT_EQ(r->state, 'S');
    EXPECT_EQ(r->flags, 4194304u);
    EXPECT_EQ(r->utime_ticks, 11u);
    EXPECT_EQ(r->stime_ticks, 22u);
    EXPECT_EQ(r->start_ticks, 12345u);
  }
}

TEST(ParsePidStatTest, StopsAtRss) {
  // Kernels differ in trailing fields; everything after field 24 (rss) is optional.
  auto r = ParsePidStat("1 (init) S 0 1 1 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99 4096 12");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->start_ticks, 99u);
  EXPECT_EQ(r->rss_pages, 12u);
  EXPECT_FALSE(ParsePidStat("1 (init) S 0 1 1 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99").ok());
}

// Bad inputs tried: empty, one field, a negative and a non-numeric resident size.
TEST(ParseStatmRssTest, SecondFieldOrError) {
  auto r = ParseStatmRss("2088 391 350 4 0 84 0\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 391u);
  EXPECT_EQ(*ParseStatmRss("0 0 0 0 0 0 0\n"), 0u);  // a zombie: no memory left
  EXPECT_FALSE(ParseStatmRss("").ok());
  EXPECT_FALSE(ParseStatmRss("2088").ok());
  auto neg = ParseStatmRss("2088 -1 0");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("bad resident size \"-1\""), std::string::npos)
      << neg.status().message();
  EXPECT_FALSE(ParseStatmRss("2088 lots 0").ok());
}

// Bad inputs tried: empty, no parentheses, ')' before '(', truncated after comm,
// truncated before start time, garbage utime, negative stime, two-letter state.
TEST(ParsePidStatTest, RejectsJunk) {
  struct Case {
    const char* name;
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"empty", "", "no \"(comm)\""},
      {"no parens", "4242 sleep S 1 2 3", "no \"(comm)\""},
      {"reversed parens", "4242 )x( S 1", "no \"(comm)\""},
      {"nothing after comm", "4242 (sleep)", "truncated: 2 fields"},
      {"truncated", "4242 (sleep) S 1 4242 4242 0 -1 4194304 100 0 0 0 5 6 0 0", "truncated"},
      {"garbage utime", "4242 (x) S 1 4242 4242 0 -1 4194304 100 0 0 0 z 6 0 0 20 0 1 0 77",
       "field 14: bad number \"z\""},
      {"two-letter state", "4242 (x) SS 1", "bad state \"SS\""},
  };
  for (const Case& c : cases) {
    auto r = ParsePidStat(c.text);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(c.error), std::string::npos)
        << c.name << ": " << r.status().message();
  }
  // Negative stime.
  std::string line = "4242 (x) S 1 4242 4242 0 -1 4194304 100 0 0 0 5 -6 0 0 20 0 1 0 77";
  EXPECT_FALSE(ParsePidStat(line).ok());
}

TEST(ParseStatusUidTest, ReadsRealUid) {
  auto r = ParseStatusUid("Name:\tx\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t5\t5\t5\t5\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 1000u);
}

// Bad inputs tried: empty, no Uid line, garbage uid, empty Uid line, uid > 32 bits.
TEST(ParseStatusUidTest, RejectsJunk) {
  for (const char* text : {"", "Name:\tx\nGid:\t1\t1\t1\t1\n", "Uid:\tabc\t0\t0\t0\n", "Uid:\n",
                           "Uid:\t4294967296\t0\t0\t0\n"}) {
    EXPECT_FALSE(ParseStatusUid(text).ok()) << text;
  }
}

TEST(FormatCommandTest, Table) {
  struct Case {
    const char* name;
    std::string raw;
    std::string comm;
    size_t max;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"args",
       "python3\0train.py\0--lr\0"
       "0.1\0"s,
       "python3", 4096, "python3 train.py --lr 0.1"},
      {"no trailing nul",
       "sleep\0"
       "30"s,
       "sleep", 4096, "sleep 30"},
      {"empty arg kept", "a\0\0b\0"s, "a", 4096, "a  b"},
      {"kernel thread", "", "kworker/0:1", 4096, "[kworker/0:1]"},
      {"only nuls", "\0\0"s, "zombie", 4096, "[zombie]"},
      {"invalid utf8",
       "a\xff"
       "b\0"s,
       "a", 4096, "a?b"},
      {"control chars", "echo\0a\nb\0"s, "echo", 4096, "echo a?b"},
      {"utf8 kept", "caf\xc3\xa9\0"s, "x", 4096, "caf\xc3\xa9"},
      {"cap", std::string(5000, 'a'), "a", 4096, std::string(4096, 'a')},
      {"cap at char boundary", "abcd\xc3\xa9", "x", 5, "abcd"},
      {"cap cuts four-byte char", "ab\xf0\x9f\x98\x80\0c"s, "x", 4, "ab"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatCommand(c.raw, c.comm, c.max), c.want) << c.name;
  }
}

TEST(ParseCgroupTest, Table) {
  struct Case {
    const char* name;
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"v2 only", "0::/user.slice/user-1000.slice/session-3.scope\n",
       "/user.slice/user-1000.slice/session-3.scope"},
      {"v2 root", "0::/\n", ""},
      {"v1 only, memory first",
       "12:pids:/p\n11:cpu,cpuacct:/c\n4:memory:/slurm/uid_1000/job_7\n1:name=systemd:/s\n",
       "/slurm/uid_1000/job_7"},
      {"v1 only, cpu when memory is root", "4:memory:/\n3:cpu,cpuacct:/c\n1:name=systemd:/s\n",
       "/c"},
      {"v1 only, systemd", "4:memory:/\n3:cpuacct,cpu:/\n1:name=systemd:/user.slice/x\n",
       "/user.slice/x"},
      {"hybrid, v2 path wins", "4:memory:/m\n1:name=systemd:/user.slice/x\n0::/user.slice/x\n",
       "/user.slice/x"},
      {"hybrid, v2 root falls back to v1",
       "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n", "/process_api/abc"},
      {"all root", "4:memory:/\n1:name=systemd:/\n0::/\n", ""},
      {"a rota task in cpuacct only, memory inherited",
       "4:memory:/process_api/abc\n2:cpuacct:/rota/1a2b3c4d.job-3.r0.worker-0\n1:cpu:/\n"
       "0::/system.slice/rota-agent.service\n",
       "/rota/1a2b3c4d.job-3.r0.worker-0"},
      {"a rota task on v2", "0::/rota/plain/1a2b3c4d.job-3.r0.worker-0\n",
       "/rota/plain/1a2b3c4d.job-3.r0.worker-0"},
      {"path with colon", "0::/a:b\n", "/a:b"},
      {"empty", "", ""},
      {"garbage", "junk\n::\n1:memory\n2:memory:relative\n", ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseCgroup(c.text, 4096), c.want) << c.name;
  }
}

TEST(SanitizeTextTest, Table) {
  struct Case {
    const char* name;
    std::string in;
    size_t max;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"ascii", "hello", 100, "hello"},
      {"overlong", "\xc0\xaf", 100, "??"},
      {"surrogate", "\xed\xa0\x80", 100, "???"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", 100, "????"},
      {"four-byte kept", "\xf0\x9f\x98\x80", 100, "\xf0\x9f\x98\x80"},
      {"truncated sequence", "ab\xe2\x82", 100, "ab??"},
      {"del and tab", "a\x7f\tb", 100, "a??b"},
      {"cut before multibyte", "ab\xf0\x9f\x98\x80", 5, "ab"},
      {"zero max", "abc", 0, ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SanitizeText(c.in, c.max), c.want) << c.name;
  }
}

}  // namespace
}  // namespace rota::host
