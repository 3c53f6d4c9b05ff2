#include "agent/collector.h"

#include "common/log.h"

namespace rota::agent {

Result<api::NodeSample> Collector::Sample(const std::vector<TaskCgroups>& tasks) {
  api::NodeSample s;
  s.time_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(s.host, host_->Sample());
  if (rapl_ != nullptr) AddCpuEnergy(s.host, tasks);
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

void Collector::AddCpuEnergy(api::HostSample& host, const std::vector<TaskCgroups>& tasks) {
  auto reading = rapl_->Read();
  if (!reading.ok()) {
    if (reading.status().message() != last_rapl_error_) {
      last_rapl_error_ = reading.status().message();
      ROTA_LOG(WARNING) << "no CPU energy in samples: " << last_rapl_error_;
    }
    return;
  }
  if (!last_rapl_error_.empty() || !rapl_read_) {
    ROTA_LOG(INFO) << "CPU energy: " << reading->packages << " RAPL package(s)"
                   << (last_rapl_error_.empty() ? "" : " readable again");
    last_rapl_error_.clear();
    rapl_read_ = true;
  }
  std::set<std::string> notes(reading->notes.begin(), reading->notes.end());
  for (const auto& note : notes) {
    if (!rapl_notes_.count(note)) ROTA_LOG(WARNING) << "CPU energy: " << note;
  }
  rapl_notes_ = std::move(notes);
  host.cpu_energy_mj = reading->energy_mj;

  std::map<std::string, std::string> errors;
  for (const auto& t : tasks) {
    if (host.cpu_tasks.size() >= api::kMaxCpuTasks) {
      if (!warned_too_many_tasks_) {
        ROTA_LOG(WARNING) << "CPU energy: more than " << api::kMaxCpuTasks
                          << " running tasks; the others' CPU energy counts as other";
        warned_too_many_tasks_ = true;
      }
      break;
    }
    auto usage = host::ReadTaskCpuUsageUsec(t.dirs);
    if (usage.ok()) {
      host.cpu_tasks.push_back({t.id, t.job_id, *usage});
      continue;
    }
    if (usage.status().code() == StatusCode::kNotFound) continue;  // it ended a moment ago
    errors[t.id] = usage.status().message();
    auto before = task_errors_.find(t.id);
    if (before == task_errors_.end() || before->second != usage.status().message()) {
      ROTA_LOG(WARNING) << "CPU energy: no CPU time for task " << t.id
                        << " (its share counts as other): " << usage.status().message();
    }
  }
  for (const auto& [id, error] : task_errors_) {
    bool listed = false;
    for (const auto& t : host.cpu_tasks) listed = listed || t.id == id;
    if (listed) ROTA_LOG(INFO) << "CPU energy: task " << id << "'s CPU time readable again";
  }
  task_errors_ = std::move(errors);
}

}  // namespace rota::agent
