#include "jobs/states.h"

namespace rota::jobs {

const char* StateName(JobState s) {
  switch (s) {
    case JobState::kPending:
      return "pending";
    case JobState::kStarting:
      return "starting";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

const char* StateName(TaskState s) {
  switch (s) {
    case TaskState::kCreated:
      return "created";
    case TaskState::kRunning:
      return "running";
    case TaskState::kExited:
      return "exited";
    case TaskState::kLost:
      return "lost";
    case TaskState::kUnstarted:
      return "unstarted";
  }
  return "?";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s : {JobState::kPending, JobState::kStarting, JobState::kRunning,
                     JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    if (name == StateName(s)) return s;
  }
  return std::nullopt;
}

std::optional<TaskState> ParseTaskState(std::string_view name) {
  for (TaskState s : {TaskState::kCreated, TaskState::kRunning, TaskState::kExited,
                      TaskState::kLost, TaskState::kUnstarted}) {
    if (name == StateName(s)) return s;
  }
  return std::nullopt;
}

}  // namespace rota::jobs
