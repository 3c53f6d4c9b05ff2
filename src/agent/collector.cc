#include "agent/collector.h"

#include "common/log.h"

namespace rota::agent {

Result<api::NodeSample> Collector::Sample() {
  api::NodeSample s;
  s.time_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(s.host, host_->Sample());
  if (gpu_ != nullptr) {
    auto gpus = gpu_->Sample();
    if (gpus.ok()) {
      s.gpus = std::move(*gpus);
      host_->Describe(s.gpus);
      last_gpu_error_.clear();
    } else if (gpus.status().message() != last_gpu_error_) {
      last_gpu_error_ = gpus.status().message();
      ROTA_LOG(WARNING) << "cannot read GPUs: " << last_gpu_error_;
    }
  }
  return s;
}

}  // namespace rota::agent
