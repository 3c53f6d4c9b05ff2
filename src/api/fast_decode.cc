#include "api/fast_decode.h"

#include <simdjson.h>

#include <optional>

#include "api/sample_decode.h"

namespace rota::api {
namespace {

namespace dom = simdjson::dom;

// simdjson's DOM element as a field_reader.h value. Integers are INT64 when
// they fit, UINT64 above; nlohmann calls every non-negative integer unsigned,
// and so does this adapter.
class SimdValue {
 public:
  explicit SimdValue(dom::element e) : e_(e) {}

  bool is_object() const { return e_.type() == dom::element_type::OBJECT; }
  bool is_array() const { return e_.type() == dom::element_type::ARRAY; }
  bool is_string() const { return e_.type() == dom::element_type::STRING; }
  bool is_number() const { return is_number_integer() || e_.type() == dom::element_type::DOUBLE; }
  bool is_number_integer() const {
    return e_.type() == dom::element_type::INT64 || e_.type() == dom::element_type::UINT64;
  }
  bool is_number_unsigned() const {
    return e_.type() == dom::element_type::UINT64 ||
           (e_.type() == dom::element_type::INT64 && i64() >= 0);
  }
  bool is_boolean() const { return e_.type() == dom::element_type::BOOL; }
  bool is_null() const { return e_.type() == dom::element_type::NULL_VALUE; }

  std::optional<SimdValue> find(const char* key) const {
    dom::element v;
    if (e_[key].get(v) != simdjson::SUCCESS) return std::nullopt;
    return SimdValue(v);
  }
  std::string_view str() const {
    std::string_view s;
    return e_.get_string().get(s) == simdjson::SUCCESS ? s : std::string_view();
  }
  int64_t i64() const {
    int64_t v = 0;
    return e_.get_int64().get(v) == simdjson::SUCCESS ? v : 0;
  }
  uint64_t u64() const {
    if (e_.type() == dom::element_type::INT64) return static_cast<uint64_t>(i64());
    uint64_t v = 0;
    return e_.get_uint64().get(v) == simdjson::SUCCESS ? v : 0;
  }
  double f64() const {
    switch (e_.type()) {
      case dom::element_type::INT64: return static_cast<double>(i64());
      case dom::element_type::UINT64: return static_cast<double>(u64());
      default: {
        double v = 0;
        return e_.get_double().get(v) == simdjson::SUCCESS ? v : 0;
      }
    }
  }
  bool boolean() const {
    bool v = false;
    return e_.get_bool().get(v) == simdjson::SUCCESS && v;
  }
  size_t size() const {
    dom::array a;
    return e_.get_array().get(a) == simdjson::SUCCESS ? a.size() : 0;
  }
  template <typename Fn>
  Status each(Fn fn) const {
    dom::array a;
    if (e_.get_array().get(a) != simdjson::SUCCESS) return Status::Ok();
    size_t i = 0;
    for (dom::element e : a) RETURN_IF_ERROR(fn(SimdValue(e), i++));
    return Status::Ok();
  }

 private:
  dom::element e_;
};

}  // namespace

std::optional<SamplesMsg> DecodeSamplesFast(const std::string& text) {
  thread_local dom::parser parser;
  dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) return std::nullopt;
  const SimdValue root(doc);
  if (!root.is_object()) return std::nullopt;
  auto v = root.find("v");
  if (!v || !v->is_number_integer() || v->u64() != static_cast<uint64_t>(kProtocolVersion)) {
    return std::nullopt;
  }
  auto type = root.find("type");
  if (!type || !type->is_string() || type->str() != "samples") return std::nullopt;
  auto seq = root.find("seq");
  if (!seq || !seq->is_number_unsigned()) return std::nullopt;
  auto samples = root.find("samples");
  if (!samples || !samples->is_array() || samples->size() > kMaxSamplesPerMessage) {
    return std::nullopt;
  }
  SamplesMsg m;
  m.seq = seq->u64();
  m.samples.reserve(samples->size());
  Status st = samples->each([&](const SimdValue& e, size_t) -> Status {
    auto s = detail::DecodeNodeSample(e);
    if (!s.ok()) return s.status();
    m.samples.push_back(std::move(*s));
    return Status::Ok();
  });
  if (!st.ok()) return std::nullopt;
  return m;
}

Result<AgentMessage> DecodeAgentMessageFast(const std::string& text) {
  if (auto m = DecodeSamplesFast(text)) return AgentMessage{std::move(*m)};
  return DecodeAgentMessage(text);
}

}  // namespace rota::api
