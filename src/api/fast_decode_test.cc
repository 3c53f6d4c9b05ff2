// DecodeAgentMessageFast gives DecodeAgentMessage's answer, message for message:
// the same samples when valid, the same error when not.
#include "api/fast_decode.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/codec.h"
#include "api/protocol.h"

namespace rota::api {
namespace {

// What a decoded message says, as one comparable string.
std::string Describe(const Result<AgentMessage>& r) {
  if (!r.ok()) return "error: " + r.status().ToString();
  if (const auto* m = std::get_if<SamplesMsg>(&*r)) {
    std::string out = "samples seq=" + std::to_string(m->seq);
    for (const auto& s : m->samples) out += "\n" + ToJson(s).dump();
    return out;
  }
  return "other message, index " + std::to_string(r->index());
}

void ExpectSameAnswer(const std::string& text) {
  const std::string slow = Describe(DecodeAgentMessage(text));
  const std::string fast = Describe(DecodeAgentMessageFast(text));
  EXPECT_EQ(fast, slow) << "message: " << text.substr(0, 400);
}

SamplesMsg Varied() {
  SamplesMsg m;
  m.seq = 4'000'000'000'123;
  for (int k = 0; k < 3; ++k) {
    NodeSample s;
    s.time_ms = 1'700'000'000'000 + k * 1000;
    s.host.cpu_percent = 12.5 + k;
    s.host.per_core_percent = {0, 33.25, 100};
    s.host.mem_total_bytes = 512ULL << 30;
    s.host.mem_available_bytes = 100ULL << 30;
    s.host.load1 = 3.5;
    s.host.load5 = 2;
    s.host.load15 = 0.25;
    if (k == 1) {
      s.host.cpu_energy_mj = 18'446'744'073'709ULL;
      s.host.cpu_busy_usec = 5'000'000;
      s.host.cpu_tasks.push_back({"job-7.0.1", 7, 1234});
    }
    for (uint32_t g = 0; g < 4; ++g) {
      GpuSample gs;
      gs.index = g;
      gs.uuid = "GPU-" + std::to_string(g) + "-\u00e9\"quoted\"";
      if (g == 3 && k == 2) {
        gs.failed = true;
        gs.error = "GPU is lost";
      } else {
        gs.memory_total_bytes = 80ULL << 30;
        gs.memory_used_bytes = g * 1000;
        gs.util_gpu_pct = g * 30;
        gs.util_memory_pct = 5;
        gs.temperature_c = 40 + g;
        gs.power_mw = 250'000;
        gs.energy_mj = 9'000'000'000ULL + g;
        gs.sm_clock_mhz = 1980;
        if (g != 1) gs.fan_pct = 30;
      }
      if (g == 0) {
        GpuProcess p;
        p.pid = 4242;
        p.type = "compute";
        p.gpu_memory_bytes = 1 << 20;
        p.uid = 1000;
        p.user = "alice";
        p.command = "python train.py --lr 0.1";
        if (k != 1) p.exe = "/usr/bin/python3.11";  // k == 1: an older agent's process
        p.cpu_percent = 99.5;
        gs.processes.push_back(p);
      }
      s.gpus.push_back(gs);
    }
    m.samples.push_back(s);
  }
  return m;
}

TEST(FastDecodeTest, AnAgentsSamplesDecodeToTheSameValues) {
  const std::string text = Encode(Varied());
  ASSERT_TRUE(DecodeSamplesFast(text).has_value()) << "the fast path must take an agent's samples";
  ASSERT_TRUE(DecodeSamplesFast(Encode(SamplesMsg{})).has_value());
  auto fast = DecodeAgentMessageFast(text);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  ASSERT_TRUE(std::holds_alternative<SamplesMsg>(*fast));
  EXPECT_EQ(std::get<SamplesMsg>(*fast).seq, 4'000'000'000'123u);
  EXPECT_EQ(std::get<SamplesMsg>(*fast).samples.size(), 3u);
  ExpectSameAnswer(text);
  ExpectSameAnswer(Encode(SamplesMsg{}));  // no samples
}

// Hostile or odd input: each variant of a valid message gets the same answer
// (accepted with the same values, or refused with the same message).
TEST(FastDecodeTest, BadAndOddMessagesGetTheSameAnswerAsTheReferenceDecoder) {
  const std::string good = Encode(Varied());
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    size_t p = t.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) t.replace(p, from.size(), to);
    return t;
  };
  std::vector<std::string> cases = {
      swap("\"v\":1", "\"v\":2"),
      swap("\"v\":1", "\"v\":\"1\""),
      swap("\"v\":1", "\"v\":1.0"),
      swap("\"v\":1", "\"v\":-1"),
      swap("\"v\":1,", ""),
      swap("\"type\":\"samples\"", "\"type\":\"sample\""),
      swap("\"type\":\"samples\"", "\"type\":null"),
      swap("\"seq\":4000000000123", "\"seq\":-1"),
      swap("\"seq\":4000000000123", "\"seq\":1.5"),
      swap("\"seq\":4000000000123", "\"seq\":18446744073709551615"),
      swap("\"seq\":4000000000123", "\"seq\":18446744073709551616"),
      swap("\"time_ms\":1700000000000", "\"time_ms\":5"),
      swap("\"time_ms\":1700000000000", "\"time_ms\":null"),
      swap("\"time_ms\":1700000000000", "\"time_ms\":1e300"),
      swap("\"cpu_percent\":12.5", "\"cpu_percent\":101"),
      swap("\"cpu_percent\":12.5", "\"cpu_percent\":\"12\""),
      swap("\"util_gpu_pct\":0", "\"util_gpu_pct\":null"),
      swap("\"util_gpu_pct\":30", "\"util_gpu_pct\":101"),
      swap("\"util_gpu_pct\":30", "\"util_gpu_pct\":-3"),
      swap("\"util_gpu_pct\":30", "\"util_gpu_pct\":30.5"),
      swap("\"energy_mj\":9000000000", "\"energy_mj\":9223372036854775808"),
      swap("\"index\":0", "\"index\":64"),
      swap("\"pid\":4242", "\"pid\":0"),
      swap("\"type\":\"compute\"", "\"type\":\"other\""),
      swap("\"failed\":true", "\"failed\":1"),
      swap("\"job_id\":7", "\"job_id\":8"),
      swap("\"per_core_percent\":[0", "\"per_core_percent\":[-1"),
      swap("\"per_core_percent\":[0", "\"per_core_percent\":[\"x\""),
      swap("\"host\":{", "\"host\":null,\"x\":{"),
      swap("\"gpus\":[", "\"gpus\":{\"a\":["),
      swap("\"samples\":[", "\"samples\":{\"a\":["),
      good.substr(0, good.size() / 2),  // cut off
      good + "garbage",
      good + "   ",
      "\xff\xfe" + good,
      "[]",
      "null",
      "",
  };
  std::string many = "{\"v\":1,\"type\":\"samples\",\"seq\":1,\"samples\":[";
  for (size_t i = 0; i <= kMaxSamplesPerMessage; ++i) many += (i ? ",{}" : "{}");
  cases.push_back(many + "]}");
  for (const auto& c : cases) ExpectSameAnswer(c);
}

TEST(FastDecodeTest, OtherMessagesGoThroughTheReferenceDecoder) {
  RegisterMsg reg;
  reg.node.name = "gpu-a";
  reg.node.node_id = "id-a";
  auto fast = DecodeAgentMessageFast(Encode(reg));
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  ASSERT_TRUE(std::holds_alternative<RegisterMsg>(*fast));
  EXPECT_EQ(std::get<RegisterMsg>(*fast).node.name, "gpu-a");
  EXPECT_FALSE(DecodeSamplesFast(Encode(reg)).has_value());
}

}  // namespace
}  // namespace rota::api
