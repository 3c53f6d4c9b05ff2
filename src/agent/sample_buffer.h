#pragma once
// SampleBuffer: samples waiting for the server's ack, numbered by a sequence.
// Bounded: when full, the oldest samples are dropped (and counted), so a long
// server outage costs the oldest history, never the agent's memory.
// Not thread-safe; the agent guards it with its mutex.

#include <cstdint>
#include <deque>
#include <vector>

#include "api/types.h"

namespace rota::agent {

class SampleBuffer {
 public:
  explicit SampleBuffer(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Appends a sample, assigning it the next sequence number (returned).
  uint64_t Push(api::NodeSample sample);
  // Drops every sample with seq <= `seq` (the server committed them).
  void Ack(uint64_t seq);
  // Up to `max` samples starting at the first with seq >= `from_seq`; *first_seq
  // receives the seq of the first returned sample.
  std::vector<api::NodeSample> From(uint64_t from_seq, size_t max, uint64_t* first_seq) const;

  size_t size() const { return samples_.size(); }
  uint64_t dropped() const { return dropped_; }
  // Seq the next Push will get.
  uint64_t next_seq() const { return next_seq_; }
  // Seq of the oldest buffered sample (next_seq() when empty).
  uint64_t first_seq() const { return next_seq_ - samples_.size(); }

 private:
  const size_t capacity_;
  std::deque<api::NodeSample> samples_;
  uint64_t next_seq_ = 1;
  uint64_t dropped_ = 0;
};

}  // namespace rota::agent
