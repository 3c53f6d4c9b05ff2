#include "sim/trace.h"

#include <gtest/gtest.h>

namespace rota::sim {
namespace {

TEST(TraceTest, ReadsPhillyRowsAndSortsThem) {
  auto t = ParseTrace(
      "submit_time,duration_s,num_gpus,cluster\r\n"
      "2017-10-09 07:01:55,66.0,1,11cb48\n"
      "2017-10-09 06:13:03,2951.5,8,6214e9\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].line, 3u);  // sorted by submit time
  EXPECT_EQ(t->jobs[0].duration_ms, 2'951'500);
  EXPECT_EQ(t->jobs[0].gpus, 8u);
  EXPECT_EQ(t->jobs[0].user, "6214e9");  // no user column: the virtual cluster
  EXPECT_EQ(t->jobs[0].submit_ms, 1'507'529'583'000);
}

TEST(TraceTest, OptionalColumnsAndNumericTimes) {
  auto t = ParseTrace("gpus,duration,submit,user,queue\n2,10,100.5,alice,ml\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs[0].submit_ms, 100'500);
  EXPECT_EQ(t->jobs[0].user, "alice");
  EXPECT_EQ(t->jobs[0].queue, "ml");
}

TEST(TraceTest, QuotedFieldsAByteOrderMarkAndTwiceNamedColumns) {
  // Quoted fields keep their commas and quotes; a spreadsheet's BOM is no part of the header.
  auto t = ParseTrace("\xEF\xBB\xBFsubmit_time,duration_s,num_gpus,user,queue\n"
                      "\"2017-10-09 07:01:55\",66,1,\"a,b\",\"m\"\"l\"\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].user, "a,b");
  EXPECT_EQ(t->jobs[0].queue, "m\"l");
  auto trailing = ParseTrace("submit_time,duration_s,num_gpus,,\n0,1,1,,\n");  // a spreadsheet's
  EXPECT_TRUE(trailing.ok()) << trailing.status().message();
  auto dup = ParseTrace("submit_time,duration_s,num_gpus,user,user\n0,1,1,a,b\n");
  EXPECT_EQ(dup.status().message(), "line 1: the column 'user' appears twice");
}

TEST(TraceTest, BadRowsNameTheirLineAndAreRefusedOrSkipped) {
  const std::string csv =
      "submit_time,duration_s,num_gpus\n"
      "2017-10-09 07:01:55,66.0,1\n"
      "2017-13-09 07:01:55,66.0,1\n"   // month 13
      "2017-10-09 07:01:55,-5,1\n"     // negative duration
      "2017-10-09 07:01:55,5,0\n"      // no GPUs
      "2017-10-09 07:01:55,5,1.5\n"    // fractional GPUs
      "2017-10-09 07:01:55,nan,1\n"
      "2017-10-09 07:01:55\n";         // short row
  auto refused = ParseTrace(csv);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("line 3: submit_time"), std::string::npos) << refused.status().message();
  auto skipped = ParseTrace(csv, {.skip_bad_rows = true});
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped->jobs.size(), 1u);
  EXPECT_EQ(skipped->bad_rows, 6u);
  ASSERT_EQ(skipped->warnings.size(), 6u);
  EXPECT_NE(skipped->warnings[1].find("line 4: duration"), std::string::npos);
  EXPECT_NE(skipped->warnings[2].find("line 5: num_gpus: '0'"), std::string::npos);
  EXPECT_NE(skipped->warnings[5].find("line 8: has 1 fields"), std::string::npos);
}

// Bad input tried: a submit time past int64 milliseconds (the replay ran to
// 11 GB), hex and inf numbers, a 10 MB field (echoed whole in the message).
TEST(TraceTest, OutOfRangeTimesAndNonDecimalNumbersAreRefusedAndQuotesAreShort) {
  auto far = ParseTrace("submit_time,duration_s,num_gpus\n0,100,1\n1e16,100,1\n");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().message(),
            "line 3: submit_time: '1e16' is after the year 9999 (skip bad rows with --skip-bad-rows)");
  EXPECT_TRUE(ParseTrace("submit_time,duration_s,num_gpus\n1.5e9,1e2,1e1\n").ok());  // spreadsheet style
  for (const char* row : {"0,100,0x10", "0,0x10,1", "0x10,1,1", "0,inf,1", "0,100,infinity"}) {
    EXPECT_FALSE(ParseTrace(std::string("submit_time,duration_s,num_gpus\n") + row + "\n").ok()) << row;
  }
  auto huge = ParseTrace("submit_time,duration_s,num_gpus\n0,100," + std::string(10 << 20, '7') + "\n");
  ASSERT_FALSE(huge.ok());
  EXPECT_LT(huge.status().message().size(), 200u);
  EXPECT_NE(huge.status().message().find("77...'"), std::string::npos);
}

TEST(TraceTest, MissingColumnsAndEmptyTracesAreRefused) {
  EXPECT_FALSE(ParseTrace("").ok());
  EXPECT_NE(ParseTrace("a,b\n1,2\n").status().message().find("header must name"), std::string::npos);
  EXPECT_NE(ParseTrace("submit,duration,gpus\n").status().message().find("no usable job"), std::string::npos);
  EXPECT_EQ(ReadTrace("/nonexistent/trace.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rota::sim
