#include "agent/sample_buffer.h"

namespace rota::agent {

uint64_t SampleBuffer::Push(api::NodeSample sample) {
  if (samples_.size() == capacity_) {
    samples_.pop_front();
    ++dropped_;
  }
  samples_.push_back(std::move(sample));
  return next_seq_++;
}

void SampleBuffer::Ack(uint64_t seq) {
  while (!samples_.empty() && first_seq() <= seq) samples_.pop_front();
}

std::vector<api::NodeSample> SampleBuffer::From(uint64_t from_seq, size_t max,
                                                uint64_t* first_seq_out) const {
  uint64_t start = std::max(from_seq, first_seq());
  *first_seq_out = start;
  std::vector<api::NodeSample> out;
  for (uint64_t s = start; s < next_seq_ && out.size() < max; ++s) {
    out.push_back(samples_[s - first_seq()]);
  }
  return out;
}

}  // namespace rota::agent
