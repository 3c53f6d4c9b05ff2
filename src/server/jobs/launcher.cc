#include "server/jobs/launcher.h"

#include <algorithm>
#include <map>

#include "common/log.h"
#include "common/status.h"
#include "server/nodes/task_transport.h"

namespace rota::server {

std::vector<LaunchFailure> Launcher::Send(const std::vector<TaskSend>& sends) const {
  std::vector<LaunchFailure> failures;
  std::map<int64_t, size_t> failed;                // job -> index in failures
  std::map<int64_t, std::set<std::string>> sent;  // job -> starts that went out
  for (const auto& s : sends) {
    if (const auto* start = std::get_if<api::TaskStartMsg>(&s.msg)) {
      if (failed.count(s.job_id)) continue;  // the gang already failed: nothing more of it starts
      Status st = Status::Ok();
      bool final = false;
      if (s.secrets.empty()) {
        st = transport_->SendTask(s.node, *start);
      } else if (secrets_ == nullptr) {
        st = Status::Unavailable("this server gives no secrets to tasks");
      } else {
        // The values live in this copy only, for the length of the send.
        auto values = secrets_->ForTask(s.owner_id, s.secrets, start->task.id, s.node);
        if (values.ok()) {
          api::TaskStartMsg with = *start;
          with.task.secrets = std::move(*values);
          st = transport_->SendTask(s.node, with);
          for (auto& sec : with.task.secrets) std::fill(sec.value.begin(), sec.value.end(), '\0');
        } else {
          st = values.status();
          final = st.code() == StatusCode::kNotFound || st.code() == StatusCode::kPermissionDenied;
        }
      }
      if (st.ok()) {
        sent[s.job_id].insert(start->task.id);
        continue;
      }
      failed[s.job_id] = failures.size();
      failures.push_back(
          LaunchFailure{s.job_id, "cannot start " + start->task.name + " on " + s.node + ": " + st.message(), {}, final});
      continue;
    }
    Status st = std::holds_alternative<api::TaskResizeMsg>(s.msg)
                    ? transport_->SendResize(s.node, std::get<api::TaskResizeMsg>(s.msg))
                    : transport_->SendTask(s.node, std::get<api::TaskSignalMsg>(s.msg));
    if (!st.ok() && !s.log_failure_as.empty()) ROTA_LOG(INFO) << s.log_failure_as << ": " << st.message();
  }
  for (auto& f : failures) f.sent = std::move(sent[f.job_id]);
  return failures;
}

}  // namespace rota::server
