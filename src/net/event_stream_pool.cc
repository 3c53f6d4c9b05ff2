#include "net/event_stream_pool.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "common/clock.h"
#include "net/curl_internal.h"
#include "net/http_client.h"
#include "net/http_types.h"

namespace rota::net {

using internal::CurlPtr;
using internal::SlistPtr;

struct EventStreamPool::Stream {
  uint64_t id = 0;
  std::string url;
  CurlPtr curl;
  SlistPtr headers;
  OnEvent on_event;
  StillWanted still_wanted;
  OnEnd on_end;
  EventStreamParser parser;
  bool checked_status = false;
  long status = 0;
  std::string error_body;
  bool stopped = false;  // by on_event
  SteadyTime last_bytes;  // anything, keep-alive comments too
  char errbuf[CURL_ERROR_SIZE] = {0};
};

size_t EventStreamPool::OnBytes(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<Stream*>(user);
  const size_t total = size * n;
  s->last_bytes = SteadyNow();
  if (!s->checked_status) {
    s->checked_status = true;
    curl_easy_getinfo(s->curl.get(), CURLINFO_RESPONSE_CODE, &s->status);
  }
  if (s->status < 200 || s->status >= 300) {
    if (s->error_body.size() < 4096) s->error_body.append(data, total);
    return total;
  }
  if (!s->parser.Feed(std::string_view(data, total), s->on_event)) {
    s->stopped = true;
    return 0;  // aborts the transfer
  }
  return total;
}

EventStreamPool::EventStreamPool(size_t max_streams, int connect_timeout_ms, int idle_timeout_ms)
    : max_streams_(max_streams), connect_timeout_ms_(connect_timeout_ms), idle_timeout_ms_(idle_timeout_ms) {
  internal::GlobalInit();
  multi_ = curl_multi_init();
  thread_ = std::thread([this] { Loop(); });
}

EventStreamPool::~EventStreamPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
  thread_.join();
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

Result<uint64_t> EventStreamPool::Open(const std::string& url, const std::vector<std::string>& headers,
                                       OnEvent on_event, StillWanted still_wanted, OnEnd on_end) {
  std::vector<std::string> all = headers;
  all.emplace_back("Accept: text/event-stream");
  ASSIGN_OR_RETURN(SlistPtr list, internal::BuildHeaders(all));
  auto s = std::make_unique<Stream>();
  s->curl.reset(curl_easy_init());
  if (!s->curl) return Status::Internal("curl_easy_init failed");
  s->url = url;
  s->headers = std::move(list);
  s->on_event = std::move(on_event);
  s->still_wanted = std::move(still_wanted);
  s->on_end = std::move(on_end);
  CURL* c = s->curl.get();
  curl_easy_setopt(c, CURLOPT_URL, s->url.c_str());
  internal::ApplyTls(c);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers.get());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_ms_));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBytes);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, s.get());
  curl_easy_setopt(c, CURLOPT_PRIVATE, s.get());
  uint64_t id = 0;
  {
    MutexLock lock(&mu_);
    if (stopping_) return Status::Unavailable("the stream pool is stopping");
    if (open_ >= max_streams_) {
      return Status::ResourceExhausted(std::to_string(max_streams_) + " streams are open already");
    }
    ++open_;
    id = s->id = ++next_id_;
    added_.push_back(std::move(s));
  }
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
  return id;
}

void EventStreamPool::Close(uint64_t id) {
  {
    MutexLock lock(&mu_);
    closing_.push_back(id);
  }
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
}

size_t EventStreamPool::open_streams() const {
  MutexLock lock(&mu_);
  return open_;
}

void EventStreamPool::Loop() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  std::map<uint64_t, std::unique_ptr<Stream>> streams;  // this thread's only
  auto end = [&](uint64_t id, Ending how, const Status& error) {
    auto it = streams.find(id);
    if (it == streams.end()) return;
    std::unique_ptr<Stream> s = std::move(it->second);
    streams.erase(it);
    curl_multi_remove_handle(multi, s->curl.get());
    s->on_end(how, error);
    MutexLock lock(&mu_);
    --open_;
  };
  auto last_check = SteadyNow();
  while (true) {
    std::vector<std::unique_ptr<Stream>> added;
    std::vector<uint64_t> closing;
    bool stopping = false;
    {
      MutexLock lock(&mu_);
      added.swap(added_);
      closing.swap(closing_);
      stopping = stopping_;
    }
    for (auto& s : added) {
      s->last_bytes = SteadyNow();  // the idle clock starts with the connection
      curl_multi_add_handle(multi, s->curl.get());
      const uint64_t id = s->id;
      streams.emplace(id, std::move(s));
    }
    for (uint64_t id : closing) end(id, Ending::kStopped, Status::Ok());
    if (stopping) {
      while (!streams.empty()) end(streams.begin()->first, Ending::kStopped, Status::Ok());
      return;
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Stream* s = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&s));
      if (s == nullptr) continue;
      const CURLcode rc = m->data.result;
      // An answer without a body (a bare 401, a stream closed at once) never reached OnBytes.
      if (!s->checked_status) curl_easy_getinfo(s->curl.get(), CURLINFO_RESPONSE_CODE, &s->status);
      if (s->stopped) {
        end(s->id, Ending::kStopped, Status::Ok());
      } else if (rc != CURLE_OK) {
        end(s->id, Ending::kFailed, internal::TransportError(rc, s->errbuf, "GET", s->url));
      } else if (s->status < 200 || s->status >= 300) {
        end(s->id, Ending::kFailed, StatusFromHttp(static_cast<int>(s->status), "GET " + s->url, s->error_body));
      } else {
        end(s->id, Ending::kSourceEnded, Status::Ok());
      }
    }
    // About every 250 ms: streams nobody wants, and sources silent past the idle timeout.
    const auto now = SteadyNow();
    if (now - last_check >= std::chrono::milliseconds(250)) {
      last_check = now;
      std::vector<uint64_t> unwanted, silent;
      for (const auto& [id, s] : streams) {
        if (s->still_wanted && !s->still_wanted()) {
          unwanted.push_back(id);
        } else if (idle_timeout_ms_ > 0 && now - s->last_bytes > std::chrono::milliseconds(idle_timeout_ms_)) {
          silent.push_back(id);
        }
      }
      for (uint64_t id : unwanted) end(id, Ending::kStopped, Status::Ok());
      for (uint64_t id : silent) {
        const std::string url = streams.at(id)->url;
        end(id, Ending::kFailed,
            Status::Unavailable("GET " + url + ": nothing arrived for " + std::to_string(idle_timeout_ms_) + " ms"));
      }
    }
    curl_multi_poll(multi, nullptr, 0, 250, nullptr);
  }
}

}  // namespace rota::net
