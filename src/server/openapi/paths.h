#pragma once
// The paths of each area of the API, for the OpenAPI description. Each adds
// the schemas its paths refer to into `schemas` and returns its paths object.

#include "api/codec.h"

namespace rota::server::openapi {

api::Json AccountPaths(api::Json& schemas);      // account_paths.cc
api::Json ViolationPaths(api::Json& schemas);    // account_paths.cc
api::Json ReservationPaths(api::Json& schemas);  // reservation_paths.cc
api::Json JobPaths(api::Json& schemas);          // job_paths.cc
api::Json QueuePaths(api::Json& schemas);        // job_paths.cc
api::Json QuotaPaths(api::Json& schemas);        // job_paths.cc
api::Json UsagePaths(api::Json& schemas);        // usage_paths.cc
api::Json PowerPaths(api::Json& schemas);        // usage_paths.cc
api::Json SshNodePaths(api::Json& schemas);      // node_paths.cc
api::Json SecretPaths(api::Json& schemas);       // node_paths.cc

}  // namespace rota::server::openapi
