#pragma once
// Reservation policies: who may reserve which GPUs, when, how long, how many
// and how much per week. Pure: a policy spec codec and an evaluator over
// (request, requester, the requester's reservations, policies, now).
//
// Semantics (docs/design-reservations.md):
//  - A policy *targets* a GPU when the GPU's node is in targets.nodes (empty:
//    every node) and its model contains one of targets.gpu_models (empty: any
//    model; case-insensitive substring). It *covers* a user named in
//    subjects.users or member of a group in subjects.groups (both empty:
//    everyone).
//  - No policy targets a GPU: anyone may reserve it, within the hard limits.
//  - Otherwise only users covered by at least one policy targeting it may, and
//    EVERY policy that targets it and covers the user must pass its rules.
//  - Admins are exempt.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "reserve/reservation.h"
#include "reserve/windows.h"
#include "reserve/zone.h"

namespace rota::reserve {

struct IdleRule {
  double threshold_pct = 5;  // idle while every reserved GPU is below this
  int64_t after_ms = 0;      // for this long
  bool release = false;      // then end the reservation (else notify only)
};

struct Policy {
  int64_t id = 0;
  std::string name;  // [A-Za-z0-9._-]{1,64}, unique
  std::string description;
  // Subjects.
  std::vector<std::string> users;
  std::vector<std::string> groups;
  // Targets.
  std::vector<std::string> nodes;
  std::vector<std::string> gpu_models;
  // Rules (absent: no limit).
  std::string zone = "UTC";
  TimeZone tz;
  std::vector<Window> windows;  // empty: any time
  std::optional<int64_t> max_duration_ms;
  std::optional<int64_t> max_ahead_ms;
  std::optional<uint32_t> max_gpus;           // GPUs held at once (targeted GPUs only)
  std::optional<double> weekly_gpu_hours;     // per ISO week (UTC), targeted GPUs only
  // Carried for other components.
  api::Json enforcement = api::Json::object();  // parsed by the enforcer
  std::optional<IdleRule> idle;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;

  bool Covers(const std::string& username, const std::vector<std::string>& groups) const;
  bool Targets(const std::string& node, const std::string& gpu_model) const;
};

// Decodes a policy from its API/file form: {name, description?, subjects?:
// {users, groups}, targets?: {nodes, gpu_models}, windows?: {zone, allow:
// [{days: ["mon-fri", "sun"], from: "09:00", to: "18:00"}]}, max_duration?,
// max_ahead? (durations like "8h"), max_gpus?, weekly_gpu_hours?, enforcement?
// (object), idle?: {threshold_pct, after, release}}. Unknown fields, bad types
// and unknown zones are InvalidArgument naming the field.
Result<Policy> PolicyFromJson(const api::Json& j);
// What is stored in policies.spec_json: everything but id, name and times.
api::Json PolicySpecJson(const Policy& p);
// The API view: PolicySpecJson plus id, name, created, updated.
api::Json ToJson(const Policy& p);

struct Requester {
  int64_t user_id = 0;
  std::string username;
  std::vector<std::string> groups;
  bool admin = false;
};

// One request to check: the GPUs it would hold and when.
struct PolicyRequest {
  std::string node;
  std::vector<NodeGpu> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  // For an edit of a running reservation: time windows are checked from here
  // (the part already run was checked when it was made). 0 otherwise.
  int64_t windows_from_ms = 0;
};

// Model of GPU `gpu` of `node` ("" when unknown), to apply targets to the
// requester's other reservations.
using ModelOf = std::function<std::string(const std::string& node, uint32_t gpu)>;

// OK when the policies allow `req` for `who`, given `existing`: the requester's
// other reservations that are not cancelled (the one being edited left out).
// PermissionDenied "policy 'NAME' (RULE): why" for the first refusal, RULE one of
// subjects, windows, max_duration, max_ahead, max_gpus, weekly_gpu_hours.
Status EvaluatePolicies(const std::vector<Policy>& policies, const Requester& who,
                        const PolicyRequest& req, const std::vector<Reservation>& existing,
                        const ModelOf& model_of, int64_t now_ms);

// The idle rules of the policies that target any of `gpus` and cover the user.
struct AppliedIdleRule {
  std::string policy;
  IdleRule rule;
};
std::vector<AppliedIdleRule> IdleRulesFor(const std::vector<Policy>& policies,
                                          const std::string& username,
                                          const std::vector<std::string>& groups,
                                          const std::string& node,
                                          const std::vector<NodeGpu>& gpus);

// Start (UTC ms) of the ISO week (Monday 00:00 UTC) holding `t_ms`, and its
// label "2026-W48".
int64_t IsoWeekStart(int64_t t_ms);
std::string IsoWeekLabel(int64_t t_ms);

}  // namespace rota::reserve
