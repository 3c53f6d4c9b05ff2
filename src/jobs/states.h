#pragma once
// The states of a job and of its tasks. Enums inside rota; the names below
// only on the wire (API JSON, agent reports) and in the store.
//
// Job:  pending -> starting -> running -> succeeded | failed | cancelled; a
//       failure with restarts left (or a preemption, a lost node) goes back to
//       pending, then starting.
// Task: created (sent to its agent) -> running -> exited | lost; unstarted
//       when the gang could not start.

#include <optional>
#include <string_view>

namespace rota::jobs {

enum class JobState { kPending, kStarting, kRunning, kSucceeded, kFailed, kCancelled };
enum class TaskState { kCreated, kRunning, kExited, kLost, kUnstarted };

// "pending", "starting", ...; "created", "running", ...
const char* StateName(JobState s);
const char* StateName(TaskState s);
// nullopt for anything else.
std::optional<JobState> ParseJobState(std::string_view name);
std::optional<TaskState> ParseTaskState(std::string_view name);

// succeeded, failed or cancelled.
inline bool IsFinal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

}  // namespace rota::jobs
