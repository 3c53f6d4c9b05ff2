#pragma once
// EventStreamPool: many text/event-stream reads on one thread (libcurl's multi interface),
// for a server that passes streams on: a follower relays the leader's /api/v1/stream to its
// own clients (docs/design-ha.md). A stream holds no thread of its own and nobody blocks on
// one: Open returns at once and the pool's thread calls back.
//
// Callbacks run on the pool's thread, never under the pool's lock: on_event for each event
// (return false to stop the stream); still_wanted about 4 times a second (return false to stop
// it, e.g. its client left while the source is quiet); then on_end exactly once with how the
// stream ended: kSourceEnded (the source closed it after a 2xx answer); kFailed with the
// status of a non-2xx answer (StatusFromHttp, with the answer's body), or Unavailable when
// the source could not be reached, broke off, or sent nothing for idle_timeout_ms; kStopped
// when a callback, Close or the pool's destruction stopped it. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace rota::net {

class EventStreamPool {
 public:
  using OnEvent = std::function<bool(const std::string& event, const std::string& data)>;
  using StillWanted = std::function<bool()>;
  enum class Ending { kSourceEnded, kFailed, kStopped };
  // `error`: why, with kFailed (OK otherwise).
  using OnEnd = std::function<void(Ending how, const Status& error)>;

  // At most `max_streams` open at once; each connects within `connect_timeout_ms` and ends
  // when nothing (not even a keep-alive comment) arrives for `idle_timeout_ms` (0: never).
  EventStreamPool(size_t max_streams, int connect_timeout_ms, int idle_timeout_ms);
  ~EventStreamPool();  // ends every stream (on_end: kStopped) and joins the thread
  EventStreamPool(const EventStreamPool&) = delete;
  EventStreamPool& operator=(const EventStreamPool&) = delete;

  // Starts reading `url` with `headers` ("Name: value"; Accept: text/event-stream is added).
  // Returns the stream's id. Errors: ResourceExhausted when max_streams are open,
  // InvalidArgument for a header with a line break, Unavailable once the pool is stopping.
  Result<uint64_t> Open(const std::string& url, const std::vector<std::string>& headers, OnEvent on_event,
                        StillWanted still_wanted, OnEnd on_end);
  // Ends stream `id` soon (on_end: kStopped). Unknown or ended ids are ignored.
  void Close(uint64_t id);
  // Streams opened and not yet ended.
  size_t open_streams() const;

 private:
  struct Stream;
  void Loop();
  static size_t OnBytes(char* data, size_t size, size_t n, void* stream);  // curl's write callback

  const size_t max_streams_;
  const int connect_timeout_ms_;
  const int idle_timeout_ms_;
  void* multi_ = nullptr;  // CURLM*: curl_multi_wakeup is the only call from other threads

  mutable Mutex mu_;
  bool stopping_ ROTA_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ROTA_GUARDED_BY(mu_) = 0;
  size_t open_ ROTA_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<Stream>> added_ ROTA_GUARDED_BY(mu_);  // for the loop to start
  std::vector<uint64_t> closing_ ROTA_GUARDED_BY(mu_);                // for the loop to end
  std::thread thread_;
};

}  // namespace rota::net
