// Generated from rota's OpenAPI description (GET /api/v1/openapi.json, built by
// src/server/openapi.cc) by openapi-typescript. Do not edit: change the spec, rebuild
// rota, then in web/ run `ROTA_BIN=../build/bin/rota npm run gen:api` (or
// `ROTA_URL=http://host:port npm run gen:api` against a running rota).
// e2e/openapi.test.mjs fails while this file is not what the served spec gives.

export interface paths {
    "/api/v1/agent/connect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Agent WebSocket (protocol v1); Authorization: Bearer <node credential, or the join token to enrol> */
        get: operations["getAgentConnect"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/arrays": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Job arrays, newest first, with their members' counts per state */
        get: operations["getArrays"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/arrays/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An array with its members (Job without spec), lowest index first; truncated: more follow */
        get: operations["getArraysById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/arrays/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel every member not ended (owner or admin); cancelled: how many */
        post: operations["postArraysByIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The accounts trail, newest first (admin): throttled sign-ins, password changes and resets */
        get: operations["getAuthEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sign in with username and password; returns a session token. Failed sign-ins are throttled per address and per account: 429 with Retry-After; 503 with Retry-After while password checks are busy */
        post: operations["postAuthLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End the calling session */
        post: operations["postAuthLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in user */
        get: operations["getAuthWhoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/gpus": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List GPUs with current processes and users, in node then index order; `total` counts every GPU (of the node, with `node`), so a large cluster can be read a page at a time */
        get: operations["getGpus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List groups */
        get: operations["getGroups"];
        put?: never;
        /** Create a group (admin); members are set on the users */
        post: operations["postGroups"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/groups/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a group (admin) */
        delete: operations["deleteGroupsByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Jobs, newest first; truncated: more follow (the next older page: before = the last id; with after, the next newer page: after = the first id). before/after pages stay exact while jobs are submitted; offset counts from the newest */
        get: operations["getJobs"];
        put?: never;
        /** Submit a job: {name, command, shell?, env?, workdir?, framework?, groups: [{role, replicas, gpus_per_task, cpus_per_task?, memory?, node_labels?, nodes?, gpu_model?, command?}], restart?: {policy, max_restarts?, backoff?, max_backoff?}, time_limit?, process_per_node?, queue?, priority?, preemptible?, spread?, stop_after_disconnect?, array?}; with array (JobArrayRequest) an array job: 201 {array: JobArray}, its members ordinary jobs with {index} substituted in argv and ROTA_ARRAY_INDEX, ROTA_ARRAY_ID in their env; 400 names the field (or the largest node, or the queue's bounds); 403 when the queue does not admit the caller. A pending job's reason says why it waits, with its position and estimated start */
        post: operations["postJobs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The processes a job spec would start, with their argv and environment (framework variables included), on an example placement; no job is made */
        post: operations["postJobsPreview"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job with its tasks and state changes */
        get: operations["getJobsById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel (owner or admin): SIGTERM, SIGKILL after a grace period; 409 once ended */
        post: operations["postJobsByIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Part of a task's log (owner or admin): `data` from `offset`; read on from `next_offset` */
        get: operations["getJobsByIdLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jobs/{id}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The metrics the job's tasks reported (`rota-metric NAME=VALUE [step=N]` lines on stdout or in $ROTA_METRICS_FILE), oldest first; truncated: more exist */
        get: operations["getJobsByIdMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List nodes (without latest) */
        get: operations["getNodes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A node with its latest sample (null before the first) */
        get: operations["getNodesByName"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes/{name}/credential": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a node's own credential (admin): its agent is disconnected and must enrol again with the join token */
        delete: operations["deleteNodesByNameCredential"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes/{name}/drain": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Drain a node (admin): no new job starts there, running jobs go on; draining a drained node replaces the reason and keeps since when */
        put: operations["putNodesByNameDrain"];
        post?: never;
        /** End a node's drain (admin); no error when it has none */
        delete: operations["deleteNodesByNameDrain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes/{name}/gpus/{index}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GPU history, downsampled (avg and max per bucket) */
        get: operations["getNodesByNameGpusByIndexMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/nodes/{name}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Node CPU/memory/load history, downsampled */
        get: operations["getNodesByNameMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/policies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reservation policies */
        get: operations["getPolicies"];
        put?: never;
        /** Create a policy (admin) */
        post: operations["postPolicies"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/policies/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A policy */
        get: operations["getPoliciesById"];
        /** Replace a policy (admin) */
        put: operations["putPoliciesById"];
        post?: never;
        /** Delete a policy (admin) */
        delete: operations["deletePoliciesById"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/power": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every GPU's power range, the limit the policies give it (target_w; null: its default), the limit in force, its draw and the agent's last outcome (set, restored, unchanged, refused, error) with why; the active budgets and how they are divided */
        get: operations["getPower"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/power/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The power audit log, newest first: limits set, restored, refused or failed on each GPU, and policy changes with the admin who made them */
        get: operations["getPowerEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/power/policies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Power policies */
        get: operations["getPowerPolicies"];
        put?: never;
        /** Create a power policy (admin): {name, description?, scope?: {nodes?, gpu_models?, labels?}, limit (W per GPU) | budget (W for all GPUs in scope), windows?: {zone?, allow: [{days, from, to}]}}; 400 for limits outside a GPU's range, unknown nodes or labels, no GPU in scope, overlapping windows; 409 for a taken name or a second budget on the same GPUs at the same time */
        post: operations["postPowerPolicies"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/power/policies/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A power policy */
        get: operations["getPowerPoliciesById"];
        /** Replace a power policy (admin); checked as on create */
        put: operations["putPowerPoliciesById"];
        post?: never;
        /** Delete a power policy (admin); its GPUs get their default back */
        delete: operations["deletePowerPoliciesById"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/queue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Pending jobs in the scheduler's order (without spec and tasks), each with why it waits, its position and estimated start */
        get: operations["getQueue"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Queues, default first, with their pending and unfinished jobs */
        get: operations["getQueues"];
        put?: never;
        /** Create a queue (admin): {name, description?, priority?, min_priority?, max_priority?, users?, groups?, max_gpus?, default_time_limit?, max_time_limit?, preemptible?} */
        post: operations["postQueues"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/queues/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A queue */
        get: operations["getQueuesByName"];
        /** Replace a queue (admin); the path names it */
        put: operations["putQueuesByName"];
        post?: never;
        /** Delete a queue with no unfinished job (admin); never the default */
        delete: operations["deleteQueuesByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/quotas": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Quotas (users, then groups), the quota period of max_gpu_hours, and each user's and group's usage in GPU-hours */
        get: operations["getQuotas"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/quotas/{kind}/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's or group's quota; 400 for a kind other than user or group */
        get: operations["getQuotasByKindByName"];
        /** Set a quota (admin): {max_gpus?, max_gpu_hours?, share?}; 0 means no limit; 404 for an unknown user or group */
        put: operations["putQuotasByKindByName"];
        post?: never;
        /** Delete a quota (admin) */
        delete: operations["deleteQuotasByKindByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/reservations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reservations: the `limit` latest-starting that match, in start order; truncated when more matched */
        get: operations["getReservations"];
        put?: never;
        /** Reserve GPUs of one node: {node, gpus | gpu_uuids | count | whole_node: true, start, end (RFC 3339), title, description?, enforcement?}; 409 names the conflicting reservations, 403 the refusing policy and rule */
        post: operations["postReservations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/reservations/held": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's GPUs on a node now (rota exec) */
        get: operations["getReservationsHeld"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/reservations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A reservation (live utilisation while running) */
        get: operations["getReservationsById"];
        put?: never;
        post?: never;
        /** Cancel (upcoming) or end now (running) (owner or admin) */
        delete: operations["deleteReservationsById"];
        options?: never;
        head?: never;
        /** Edit {start?, end?, title?, description?, enforcement?} (owner or admin) */
        patch: operations["patchReservationsById"];
        trace?: never;
    };
    "/api/v1/secrets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The secrets the caller may use (its own and its groups'); admins: every secret. Metadata only: no route ever returns a value */
        get: operations["getSecrets"];
        put?: never;
        /** Create a secret owned by the caller, or by `group` (the caller must be in it): exactly one of value (text) and value_hex (any bytes), 1..65536 bytes; the name is [A-Za-z0-9][A-Za-z0-9._-]{0,63}, unique in the cluster. 400 for a bad name or value, 403 outside the group, 404 for an unknown group, 409 for a taken name */
        post: operations["postSecrets"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/secrets/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a secret: its owner, a member of its group, or an admin (who cannot read or use it); 404 for one the caller cannot see */
        delete: operations["deleteSecretsByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/servers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The servers sharing this store: role, address, version, last renewal (reader) */
        get: operations["getServers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ssh-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The server's SSH public key, to authorise on agentless nodes (admin) */
        get: operations["getSshKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ssh-nodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Agentless nodes reached over SSH, reachable or why not */
        get: operations["getSshNodes"];
        put?: never;
        /** Declare an agentless node (admin): {name, url: ssh://user@host[:port], gpus?, gpu_model?, labels?, host_key?}; a root login runs tasks as each job's owner (setpriv), another login only that user's. The node is pinned to one host key: host_key (an OpenSSH public key line or a SHA256:... fingerprint) must match a key it presents (409 naming both fingerprints otherwise, nothing stored); without it the key it presents now is pinned, its fingerprint in the answer to compare. 400 for a malformed host_key; 409 when the name is taken; 503 when the node's keys cannot be read (unless a whole key was given). The answer is the node as declared (not probed yet) */
        post: operations["postSshNodes"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ssh-nodes/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Forget an agentless node (admin); 409 while tasks run there */
        delete: operations["deleteSshNodesByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/ssh-nodes/{name}/host-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pin an agentless node to a new host key (admin), after a change on purpose or for a node declared before pins: host_key as for the declaration (checked against what the node presents), or none for the key it presents now */
        post: operations["postSshNodesByNameHostKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live node and GPU updates (server-sent events: node, as GET /api/v1/nodes; sample, {node, time?, host?: HostSample, gpus: [Gpu]}) */
        get: operations["getStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's tokens */
        get: operations["getTokens"];
        put?: never;
        /** Create an API token {name, ttl}; the secret is in the answer only. ttl is at most the server's api_token_max_ttl (90d by default), which is also what a token without one gets */
        post: operations["postTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a token (own; admins: any) */
        delete: operations["deleteTokensById"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GPU time, utilisation and energy summed by user, group, job, reservation, node or area (kept by hour: an hour the window covers in part counts pro rata of its elapsed part); energy_kwh is the GPUs' energy and energy_method says how it was measured (counter, integrated, estimated, mixed, none); cpu_energy_kwh is the CPU packages' (RAPL), total_energy_kwh both, and cost and co2_kg count both; node and area rows carry avg_power_w over the time the node was measured (measured_hours); non-admins get only their own figures */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users (admin) */
        get: operations["getUsers"];
        put?: never;
        /** Create a user (admin) */
        post: operations["postUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user (itself or admin) */
        get: operations["getUsersByName"];
        put?: never;
        post?: never;
        /** Delete a user without reservations (admin) */
        delete: operations["deleteUsersByName"];
        options?: never;
        head?: never;
        /** Change a user: itself (display_name, email, password) or admin (all). A new password for oneself needs current_password (403 when wrong; throttled like a sign-in); an admin setting another user's does not. Every token of the user then ends, API tokens too */
        patch: operations["patchUsersByName"];
        trace?: never;
    };
    "/api/v1/violations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GPU-usage violations, newest first (audit log); next_offset while more may follow */
        get: operations["getViolations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/violations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A violation with every enforcement step (open, warn, email, term, kill, resolve and the agent's outcomes) */
        get: operations["getViolationsById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness, and this server's role among the servers of one store (docs/design-ha.md) */
        get: operations["getHealthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness (a follower: ready, with the leader's URL) */
        get: operations["getReadyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ApiToken: {
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string | null;
            id: string;
            /** @enum {string} */
            kind: "session" | "api";
            /** Format: date-time */
            last_used_at: string | null;
            name: string;
            token?: string;
        };
        ArrayMember: {
            array?: {
                id: number;
                index: number;
            };
            /** Format: date-time */
            created: string;
            /** Format: date-time */
            deadline?: string;
            /** Format: date-time */
            ended?: string;
            /** Format: date-time */
            estimated_start?: string;
            events?: {
                reason: string;
                /** @enum {string} */
                state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
                /** Format: date-time */
                time: string;
            }[];
            framework: components["schemas"]["Framework"];
            gpu_seconds: number;
            id: number;
            lost_gpu_seconds: number;
            metrics?: {
                [key: string]: {
                    count: number;
                    last: number;
                    last_step?: number;
                    max: number;
                    min: number;
                };
            };
            name: string;
            owner: string;
            params?: {
                [key: string]: string;
            };
            position?: number;
            preemptible: boolean;
            preemptions: number;
            priority: number;
            queue: string;
            /** Format: date-time */
            queued?: string;
            reason: string;
            restart_count: number;
            /** Format: date-time */
            started?: string;
            /** @enum {string} */
            state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
            stopping?: boolean;
            tasks: components["schemas"]["JobTask"][];
            /** Format: date-time */
            updated: string;
        };
        AuthEvent: {
            /** @enum {string} */
            action: "login_throttled" | "password_changed" | "password_reset";
            actor: string;
            address: string;
            /** Format: date-time */
            at: string;
            detail: string;
            id: number;
            username: string;
        };
        EarlyStopping: {
            /** @enum {string} */
            goal?: "min" | "max";
            max_step?: number;
            metric: string;
            min_step?: number;
            min_trials?: number;
            reduction?: number;
            /** @enum {string} */
            rule: "median" | "asha";
        };
        Error: {
            error: {
                code: string;
                message: string;
            };
        };
        /** @enum {string} */
        Framework: "generic" | "tensorflow" | "pytorch" | "mpi" | "jax";
        Gpu: {
            energy_mj?: number;
            error?: string;
            failed?: boolean;
            fan_pct?: number;
            index: number;
            mem_clock_mhz?: number;
            memory_total_bytes?: number;
            memory_used_bytes?: number;
            name: string;
            node: string;
            pci_bus_id: string;
            power_limit_mw?: number;
            power_mw?: number;
            processes: components["schemas"]["GpuProcess"][];
            sm_clock_mhz?: number;
            /** @enum {string} */
            state: "ok" | "failed" | "unreachable";
            temperature_c?: number;
            /** Format: date-time */
            time?: string;
            users: string[];
            util_gpu_pct?: number;
            util_memory_pct?: number;
            uuid: string;
        };
        GpuInfo: {
            index: number;
            memory_total_bytes?: number;
            name: string;
            pci_bus_id: string;
            power_default_mw?: number;
            power_limit_mw?: number;
            power_max_mw?: number;
            power_min_mw?: number;
            uuid: string;
        };
        GpuProcess: {
            cgroup?: string;
            command?: string;
            cpu_percent?: number;
            exe?: string;
            gpu_memory_bytes?: number;
            pid: number;
            rss_bytes?: number;
            start_time_ms?: number;
            /** @enum {string} */
            type: "compute" | "graphics";
            uid?: number;
            user?: string;
        };
        Group: {
            /** Format: date-time */
            created_at?: string;
            description: string;
            members: string[];
            name: string;
        };
        HostSample: {
            cpu_busy_usec?: number;
            cpu_energy_mj?: number;
            cpu_percent: number;
            cpu_tasks?: {
                id: string;
                job_id: number;
                usage_usec: number;
            }[];
            load1: number;
            load15: number;
            load5: number;
            mem_available_bytes: number;
            mem_total_bytes: number;
            per_core_percent: number[];
        };
        Job: {
            array?: {
                id: number;
                index: number;
            };
            /** Format: date-time */
            created: string;
            /** Format: date-time */
            deadline?: string;
            /** Format: date-time */
            ended?: string;
            /** Format: date-time */
            estimated_start?: string;
            events?: {
                reason: string;
                /** @enum {string} */
                state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
                /** Format: date-time */
                time: string;
            }[];
            framework: components["schemas"]["Framework"];
            gpu_seconds: number;
            id: number;
            lost_gpu_seconds: number;
            name: string;
            owner: string;
            params?: {
                [key: string]: string;
            };
            position?: number;
            preemptible: boolean;
            preemptions: number;
            priority: number;
            queue: string;
            /** Format: date-time */
            queued?: string;
            reason: string;
            restart_count: number;
            spec: components["schemas"]["StoredJobSpec"];
            /** Format: date-time */
            started?: string;
            /** @enum {string} */
            state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
            stopping?: boolean;
            tasks: components["schemas"]["JobTask"][];
            /** Format: date-time */
            updated: string;
        };
        JobArray: {
            counts: {
                [key: string]: number;
            };
            /** Format: date-time */
            created: string;
            id: number;
            indices: string;
            max_running: number;
            name: string;
            owner: string;
            size: number;
            spec: components["schemas"]["StoredJobSpec"];
            sweep?: components["schemas"]["Sweep"];
        };
        JobArrayMembers: {
            cancelled?: number;
            counts: {
                [key: string]: number;
            };
            /** Format: date-time */
            created: string;
            id: number;
            indices: string;
            max_running: number;
            members?: components["schemas"]["ArrayMember"][];
            name: string;
            owner: string;
            size: number;
            spec: components["schemas"]["StoredJobSpec"];
            sweep?: components["schemas"]["Sweep"];
            truncated?: boolean;
        };
        /** @description "0-99", "0,3,7-9", "1-20:5" (step), optionally %N: at most N members at once (or max_running); at most 100000 members */
        JobArrayRequest: string | {
            indices: string;
            max_running?: number;
        };
        JobLogChunk: {
            data: string;
            next_offset: number;
            offset: number;
            size: number;
            /** @enum {string} */
            stream: "stdout" | "stderr";
            task: string;
        };
        JobMetrics: {
            job: number;
            metrics: {
                name: string;
                step?: number;
                task: string;
                /** Format: date-time */
                time: string;
                value: number;
            }[];
            truncated?: boolean;
        };
        JobPreview: {
            note: string;
            processes: components["schemas"]["PreviewProcess"][];
        };
        JobSpec: {
            array?: components["schemas"]["JobArrayRequest"];
            command?: string[];
            env?: {
                [key: string]: string;
            };
            framework?: components["schemas"]["Framework"];
            groups: components["schemas"]["TaskGroup"][];
            name: string;
            preemptible?: boolean;
            priority?: number;
            process_per_node?: boolean;
            queue?: string;
            restart?: {
                backoff?: string;
                max_backoff?: string;
                max_restarts?: number;
                /** @enum {string} */
                policy: "never" | "on-failure" | "exit-code";
            };
            /** @description secret names: NAME (the file $ROTA_SECRETS_DIR/NAME), NAME:ENV_VAR (also that variable); the submitter must own each (or be in its group) */
            secrets?: string[];
            shell?: boolean;
            spread?: boolean;
            stop_after_disconnect?: string;
            sweep?: components["schemas"]["Sweep"];
            time_limit?: string;
            workdir?: string;
        };
        JobTask: {
            address: string;
            ended_ms?: number;
            error?: string;
            exit_code?: number;
            gpus: number[];
            id: string;
            index: number;
            name: string;
            node: string;
            pid: number;
            port: number;
            role: string;
            runs: boolean;
            signal?: number;
            /** @enum {string} */
            state: "created" | "running" | "exited" | "lost" | "unstarted";
            unix_user: string;
        };
        LoginRequest: {
            password: string;
            username: string;
        };
        Node: {
            addresses: string[];
            agent_version: string;
            connected: boolean;
            cpu_energy_status?: string;
            cpus: number;
            drain: {
                by: string;
                reason: string;
                /** Format: date-time */
                since: string;
            } | null;
            failed_gpu_count: number;
            gpu_count: number;
            gpu_status: string;
            gpus: components["schemas"]["GpuInfo"][];
            hostname: string;
            labels: {
                [key: string]: string;
            };
            /** Format: date-time */
            last_seen: string | null;
            latest?: {
                gpus: {
                    energy_mj?: number;
                    error?: string;
                    failed?: boolean;
                    fan_pct?: number;
                    index: number;
                    mem_clock_mhz?: number;
                    memory_total_bytes?: number;
                    memory_used_bytes?: number;
                    power_limit_mw?: number;
                    power_mw?: number;
                    processes: components["schemas"]["GpuProcess"][];
                    sm_clock_mhz?: number;
                    temperature_c?: number;
                    util_gpu_pct?: number;
                    util_memory_pct?: number;
                    uuid: string;
                }[];
                host: components["schemas"]["HostSample"];
                /** Format: date-time */
                time: string;
                time_ms: number;
            } | null;
            memory_bytes: number;
            name: string;
            node_id: string;
            sample_interval_ms: number;
            /** @enum {string} */
            state: "ready" | "unreachable";
            /** Format: date-time */
            state_since: string | null;
            unreachable_reason?: string;
        };
        Policy: {
            /** Format: date-time */
            created: string;
            description: string;
            enforcement: {
                [key: string]: unknown;
            };
            id: number;
            idle?: {
                after: string;
                release: boolean;
                threshold_pct: number;
            };
            max_ahead?: string;
            max_duration?: string;
            max_gpus?: number;
            name: string;
            subjects: {
                groups: string[];
                users: string[];
            };
            targets: {
                gpu_models: string[];
                nodes: string[];
            };
            /** Format: date-time */
            updated: string;
            weekly_gpu_hours?: number;
            windows?: components["schemas"]["WeeklyWindows"];
        };
        PolicySpec: {
            created?: string;
            description?: string;
            enforcement?: {
                [key: string]: unknown;
            };
            id?: number;
            idle?: {
                after: string;
                release?: boolean;
                threshold_pct?: number;
            };
            max_ahead?: string;
            max_duration?: string;
            max_gpus?: number;
            name: string;
            subjects?: {
                groups?: string[];
                users?: string[];
            };
            targets?: {
                gpu_models?: string[];
                nodes?: string[];
            };
            updated?: string;
            weekly_gpu_hours?: number;
            windows?: {
                allow: {
                    days: string[];
                    from?: string;
                    to?: string;
                }[];
                zone?: string;
            };
        };
        PolicyWindow: {
            days: string[];
            from: string;
            to: string;
        };
        PowerBudget: {
            assigned_w: number;
            budget_w: number;
            busy: number;
            feasible: boolean;
            gpus: number;
            left_out: number;
            min_total_w: number;
            policy: string;
        };
        PowerEvent: {
            action: string;
            actor: string;
            detail: string;
            gpu: number | null;
            id: number;
            limit_w: number | null;
            node: string;
            policy: string;
            previous_w: number | null;
            requested_w: number | null;
            /** Format: date-time */
            time: string;
            uuid: string;
        };
        PowerGpu: {
            busy: boolean;
            default_w: number | null;
            detail: string;
            in_force_w: number | null;
            index: number;
            max_w: number | null;
            min_w: number | null;
            model: string;
            node: string;
            /** @enum {string} */
            outcome: "" | "set" | "restored" | "unchanged" | "refused" | "error";
            policies: string[];
            power_w: number | null;
            reason: string;
            /** Format: date-time */
            reported: string | null;
            target_w: number | null;
            uuid: string;
        };
        PowerPolicy: {
            budget?: number;
            /** Format: date-time */
            created: string;
            description: string;
            id: number;
            /** @enum {string} */
            kind: "limit" | "budget";
            limit?: number;
            name: string;
            scope: components["schemas"]["PowerScope"];
            /** Format: date-time */
            updated: string;
            watts: number;
            windows?: components["schemas"]["WeeklyWindows"];
        };
        PowerPolicySpec: {
            budget?: number | string;
            created?: string;
            description?: string;
            id?: number;
            /** @enum {string} */
            kind?: "limit" | "budget";
            limit?: number | string;
            name: string;
            scope?: {
                gpu_models?: string[];
                labels?: {
                    [key: string]: string;
                };
                nodes?: string[];
            };
            updated?: string;
            watts?: number;
            windows?: {
                allow: {
                    days: string[];
                    from?: string;
                    to?: string;
                }[];
                zone?: string;
            };
        };
        PowerScope: {
            gpu_models: string[];
            labels: {
                [key: string]: string;
            };
            nodes: string[];
        };
        PowerState: {
            budgets: components["schemas"]["PowerBudget"][];
            gpus: components["schemas"]["PowerGpu"][];
            /** Format: date-time */
            planned: string | null;
        };
        PreviewProcess: {
            argv: string[];
            env: {
                [key: string]: string;
            };
            files: string[];
            gpus: number[];
            name: string;
            node: string;
            role: string;
            runs: boolean;
            task: string;
        };
        Queue: {
            built_in: boolean;
            default_time_limit?: string;
            description: string;
            groups: string[];
            max_gpus: number;
            max_priority: number;
            max_time_limit?: string;
            min_priority: number;
            name: string;
            pending: number;
            preemptible: boolean;
            priority: number;
            unfinished: number;
            users: string[];
        };
        QueuePage: {
            jobs: components["schemas"]["QueuedJob"][];
            total: number;
        };
        QueuedJob: {
            array?: {
                id: number;
                index: number;
            };
            /** Format: date-time */
            created: string;
            /** Format: date-time */
            deadline?: string;
            /** Format: date-time */
            ended?: string;
            /** Format: date-time */
            estimated_start?: string;
            events?: {
                reason: string;
                /** @enum {string} */
                state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
                /** Format: date-time */
                time: string;
            }[];
            framework: components["schemas"]["Framework"];
            gpu_seconds: number;
            gpus: number;
            id: number;
            lost_gpu_seconds: number;
            name: string;
            owner: string;
            params?: {
                [key: string]: string;
            };
            position?: number;
            preemptible: boolean;
            preemptions: number;
            priority: number;
            queue: string;
            /** Format: date-time */
            queued?: string;
            reason: string;
            restart_count: number;
            /** Format: date-time */
            started?: string;
            /** @enum {string} */
            state: "pending" | "starting" | "running" | "succeeded" | "failed" | "cancelled";
            stopping?: boolean;
            /** Format: date-time */
            updated: string;
        };
        Quota: {
            /** @enum {string} */
            kind: "user" | "group";
            max_gpu_hours: number;
            max_gpus: number;
            name: string;
            share: number;
            /** Format: date-time */
            updated?: string;
        };
        QuotaList: {
            period: string;
            quotas: components["schemas"]["Quota"][];
            usage: components["schemas"]["QuotaUsage"][];
        };
        QuotaUsage: {
            fairshare_gpu_hours: number;
            /** @enum {string} */
            kind: "user" | "group";
            name: string;
            period_gpu_hours: number;
        };
        Reservation: {
            avg_util_gpu?: number;
            avg_util_mem?: number;
            /** Format: date-time */
            cancelled?: string;
            /** Format: date-time */
            created: string;
            description: string;
            /** Format: date-time */
            end: string;
            end_ms: number;
            enforcement: {
                [key: string]: unknown;
            };
            gpu_uuids: string[];
            gpus: number[];
            id: number;
            /** Format: date-time */
            idle_notified?: string;
            live?: components["schemas"]["ReservationLive"];
            node: string;
            owner: string;
            owner_id: number;
            /** Format: date-time */
            start: string;
            start_ms: number;
            /** @enum {string} */
            state: "upcoming" | "running" | "ended" | "cancelled";
            title: string;
            /** Format: date-time */
            updated: string;
        };
        ReservationLive: {
            avg_util_gpu: number;
            avg_util_mem: number;
            /** Format: date-time */
            idle_since?: string;
            samples: number;
        };
        ReservationRequest: {
            count?: number;
            description?: string;
            /** Format: date-time */
            end: string;
            enforcement?: {
                [key: string]: unknown;
            };
            gpu_uuids?: string[];
            gpus?: number[];
            node: string;
            /** Format: date-time */
            start: string;
            title: string;
            whole_node?: boolean;
        };
        Secret: {
            created_by: string;
            created_ms: number;
            group: string;
            key_id: number;
            last_used_ms: number | null;
            name: string;
            owner: string;
            size: number;
        };
        Series: {
            /** Format: date-time */
            from: string;
            gpu?: number;
            node: string;
            points: components["schemas"]["SeriesPoint"][];
            /** @enum {string} */
            resolution: "raw" | "1m";
            step_ms: number;
            /** Format: date-time */
            to: string;
        };
        SeriesPoint: {
            avg: {
                [key: string]: number;
            };
            last?: {
                [key: string]: number;
            };
            max: {
                [key: string]: number;
            };
            samples: number;
            t_ms: number;
            /** Format: date-time */
            time: string;
        };
        Session: {
            /** Format: date-time */
            expires_at: string;
            token: string;
            token_id: string;
            user: components["schemas"]["User"];
        };
        SshNode: {
            created_ms: number;
            error?: string;
            gpu_model: string;
            gpus: number;
            host_key: string;
            host_key_fingerprint: string;
            host_key_ms: number;
            /** @enum {string} */
            host_key_source: "" | "given" | "fingerprint" | "scanned";
            labels: {
                [key: string]: string;
            };
            name: string;
            reachable: boolean;
            tasks: number;
            url: string;
        };
        StoredJobSpec: {
            command: string[];
            env: {
                [key: string]: string;
            };
            framework: components["schemas"]["Framework"];
            groups: {
                command?: string[];
                cpus_per_task: number;
                gpu_model?: string;
                gpus_per_task: number;
                malleable?: {
                    max_cpus: number;
                    min_cpus: number;
                };
                memory: number;
                node_labels: {
                    [key: string]: string;
                };
                nodes: string[];
                replicas: number;
                role: string;
            }[];
            name: string;
            preemptible?: boolean;
            priority?: number;
            process_per_node: boolean;
            queue?: string;
            restart: {
                backoff: string;
                max_backoff: string;
                max_restarts: number;
                /** @enum {string} */
                policy: "never" | "on-failure" | "exit-code";
            };
            secrets?: string[];
            shell: boolean;
            spread?: boolean;
            stop_after_disconnect?: string;
            time_limit?: string;
            workdir: string;
        };
        Sweep: {
            count?: number;
            early_stopping?: components["schemas"]["EarlyStopping"];
            max_failures?: number;
            max_running?: number;
            max_trials?: number;
            /** @enum {string} */
            method?: "grid" | "random";
            parameters: {
                [key: string]: Record<string, never>;
            };
            seed?: number;
        };
        TaskGroup: {
            command?: string[];
            cpus_per_task?: number;
            gpu_model?: string;
            gpus_per_task?: number;
            malleable?: {
                max_cpus: number;
                min_cpus: number;
            };
            /** @description bytes, or a size such as "16GiB" */
            memory?: number | string;
            node_labels?: {
                [key: string]: string;
            };
            nodes?: string[];
            replicas?: number;
            role?: string;
        };
        UsageFigures: {
            avg_power_w?: number;
            avg_util_pct: number;
            busy_gpu_hours: number;
            co2_kg?: number;
            cost?: number;
            cpu_energy_kwh: number;
            currency?: string;
            energy_kwh: number;
            /** @enum {string} */
            energy_method: "counter" | "integrated" | "estimated" | "mixed" | "none";
            energy_shares?: {
                counter: number;
                estimated: number;
                integrated: number;
            };
            gpu_hours: number;
            idle_energy_kwh: number;
            idle_gpu_hours: number;
            measured_hours?: number;
            reserved_idle_gpu_hours: number;
            total_energy_kwh: number;
            unmeasured_gpu_hours: number;
            used_gpu_hours: number;
        };
        UsageReport: {
            /** @enum {string} */
            by: "user" | "group" | "job" | "reservation" | "node" | "area";
            /** Format: date-time */
            from: string;
            label?: string;
            rows: components["schemas"]["UsageReportRow"][];
            /** Format: date-time */
            to: string;
            total: components["schemas"]["UsageFigures"];
            user?: string;
        };
        UsageReportRow: {
            avg_power_w?: number;
            avg_util_pct: number;
            busy_gpu_hours: number;
            co2_kg?: number;
            cost?: number;
            cpu_energy_kwh: number;
            currency?: string;
            energy_kwh: number;
            /** @enum {string} */
            energy_method: "counter" | "integrated" | "estimated" | "mixed" | "none";
            energy_shares?: {
                counter: number;
                estimated: number;
                integrated: number;
            };
            gpu_hours: number;
            idle_energy_kwh: number;
            idle_gpu_hours: number;
            key: string;
            measured_hours?: number;
            reserved_idle_gpu_hours: number;
            total_energy_kwh: number;
            unmeasured_gpu_hours: number;
            used_gpu_hours: number;
        };
        User: {
            /** Format: date-time */
            created_at: string;
            disabled: boolean;
            display_name: string;
            email: string;
            groups: string[];
            has_password: boolean;
            id: number;
            /** @enum {string} */
            role: "user" | "admin";
            unix_user: string;
            unix_users: {
                [key: string]: string;
            };
            /** Format: date-time */
            updated_at: string;
            username: string;
        };
        Violation: {
            /** Format: date-time */
            closed: string | null;
            closed_ms: number | null;
            dry_run: boolean;
            events?: components["schemas"]["ViolationEvent"][];
            gpu: number;
            gpu_uuid: string;
            id: number;
            last_action: string;
            /** @enum {string} */
            mode: "reserved" | "strict";
            node: string;
            /** Format: date-time */
            opened: string;
            opened_ms: number;
            processes: components["schemas"]["ViolationProcess"][];
            reservation_id: number | null;
            reservation_owner: string | null;
            resolution: string;
            /** @enum {string} */
            state: "open" | "resolved";
            uid: number | null;
            unix_user: string;
            user: string | null;
        };
        ViolationEvent: {
            action: string;
            detail: string;
            id: number;
            outcome: string;
            pids: {
                detail?: string;
                outcome?: string;
                pid: number;
                start_time_ms: number;
            }[];
            t_ms: number;
            /** Format: date-time */
            time: string;
        };
        ViolationList: {
            limit: number;
            next_offset?: number;
            offset: number;
            violations: components["schemas"]["Violation"][];
        };
        ViolationProcess: {
            command: string;
            pid: number;
            start_time_ms: number;
        };
        WeeklyWindows: {
            allow: components["schemas"]["PolicyWindow"][];
            zone: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getAgentConnect: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching protocols: the WebSocket */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Upgrade required */
            426: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Any other failure */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getArrays: {
        parameters: {
            query?: {
                /** @description only the caller's */
                mine?: boolean;
                /** @description 1..1000 (default 100) */
                limit?: number;
                /** @description only arrays with a smaller id */
                before?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        arrays: components["schemas"]["JobArray"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getArraysById: {
        parameters: {
            query?: {
                /** @description 1..1000 (default 100) */
                limit?: number;
                /** @description skip this many members */
                offset?: number;
                /** @description only members in this state */
                state?: string;
            };
            header?: never;
            path: {
                /** @description array id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobArrayMembers"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postArraysByIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description array id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobArrayMembers"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuthEvents: {
        parameters: {
            query?: {
                /** @description at most this many (1..1000, default 100) */
                limit?: number;
                /** @description only entries with a smaller id (paging) */
                before?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        events: components["schemas"]["AuthEvent"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postAuthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LoginRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Session"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postAuthLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuthWhoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getGpus: {
        parameters: {
            query?: {
                /** @description only this node */
                node?: string;
                /** @description GPUs to skip (default 0) */
                offset?: number;
                /** @description at most this many GPUs (default: all) */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        gpus: components["schemas"]["Gpu"][];
                        total: number;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getGroups: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        groups: components["schemas"]["Group"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postGroups: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Group"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteGroupsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description username or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobs: {
        parameters: {
            query?: {
                /** @description only the caller's */
                mine?: boolean;
                /** @description pending, starting, running, succeeded, failed or cancelled */
                state?: string;
                /** @description 1..1000 (default 100) */
                limit?: number;
                /** @description skip this many of the newest (default 0) */
                offset?: number;
                /** @description only jobs with a smaller id (older) */
                before?: number;
                /** @description false: array members left out */
                members?: boolean;
                /** @description only jobs with a larger id (newer): the limit oldest of them, shown newest first */
                after?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: components["schemas"]["Job"][];
                        truncated?: boolean;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postJobs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JobSpec"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"] | {
                        array: components["schemas"]["JobArray"];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postJobsPreview: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JobSpec"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobPreview"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobsById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description job id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postJobsByIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description job id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobsByIdLogs: {
        parameters: {
            query?: {
                /** @description process name, e.g. worker-1 (default: the first) */
                task?: string;
                /** @description stdout (default) or stderr */
                stream?: string;
                /** @description byte offset */
                offset?: number;
                /** @description 1..1048576 (default 65536) */
                max_bytes?: number;
            };
            header?: never;
            path: {
                /** @description job id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobLogChunk"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobsByIdMetrics: {
        parameters: {
            query?: {
                /** @description 1..10000 (default 10000) */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description job id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobMetrics"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getNodes: {
        parameters: {
            query?: {
                /** @description ready or unreachable */
                state?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        nodes: components["schemas"]["Node"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getNodesByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteNodesByNameCredential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        enrolled_from: string;
                        enrolled_ms: number;
                        node: string;
                        revoked: boolean;
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putNodesByNameDrain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    reason?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteNodesByNameDrain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getNodesByNameGpusByIndexMetrics: {
        parameters: {
            query?: {
                /** @description RFC 3339 start (default: to - 1h) */
                from?: string;
                /** @description RFC 3339 end (default: now) */
                to?: string;
                /** @description bucket size, e.g. 10s, 1m (default: auto, <= 1000 points) */
                step?: string;
            };
            header?: never;
            path: {
                /** @description node name */
                name: string;
                /** @description GPU index on the node */
                index: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Series"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getNodesByNameMetrics: {
        parameters: {
            query?: {
                /** @description RFC 3339 start (default: to - 1h) */
                from?: string;
                /** @description RFC 3339 end (default: now) */
                to?: string;
                /** @description bucket size, e.g. 10s, 1m (default: auto, <= 1000 points) */
                step?: string;
            };
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Series"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPolicies: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        policies: components["schemas"]["Policy"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postPolicies: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicySpec"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Policy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Policy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putPoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicySpec"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Policy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPower: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PowerState"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPowerEvents: {
        parameters: {
            query?: {
                /** @description only this node */
                node?: string;
                /** @description RFC 3339: events at or after */
                from?: string;
                /** @description RFC 3339: events before */
                to?: string;
                /** @description at most this many (1..1000, default 100) */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        events: components["schemas"]["PowerEvent"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPowerPolicies: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        policies: components["schemas"]["PowerPolicy"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postPowerPolicies: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PowerPolicySpec"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PowerPolicy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPowerPoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description power policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PowerPolicy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putPowerPoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description power policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PowerPolicySpec"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PowerPolicy"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePowerPoliciesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description power policy id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQueue: {
        parameters: {
            query?: {
                /** @description only this queue */
                queue?: string;
                /** @description skip this many (default 0) */
                offset?: number;
                /** @description at most this many (default all); `total` says how many wait */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueuePage"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQueues: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        queues: components["schemas"]["Queue"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postQueues: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    default_time_limit?: string;
                    description?: string;
                    groups?: string[];
                    max_gpus?: number;
                    max_priority?: number;
                    max_time_limit?: string;
                    min_priority?: number;
                    name: string;
                    preemptible?: boolean;
                    priority?: number;
                    users?: string[];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQueuesByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description queue name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putQueuesByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description queue name */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    default_time_limit?: string;
                    description?: string;
                    groups?: string[];
                    max_gpus?: number;
                    max_priority?: number;
                    max_time_limit?: string;
                    min_priority?: number;
                    name?: string;
                    preemptible?: boolean;
                    priority?: number;
                    users?: string[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteQueuesByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description queue name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQuotas: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuotaList"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQuotasByKindByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user or group */
                kind: string;
                /** @description user or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Quota"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putQuotasByKindByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user or group */
                kind: string;
                /** @description user or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    kind?: "user" | "group";
                    max_gpu_hours?: number;
                    max_gpus?: number;
                    name?: string;
                    share?: number;
                    updated?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Quota"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteQuotasByKindByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user or group */
                kind: string;
                /** @description user or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReservations: {
        parameters: {
            query?: {
                /** @description only the caller's */
                mine?: boolean;
                /** @description only this user's */
                user?: string;
                /** @description only on this node */
                node?: string;
                /** @description RFC 3339: overlapping [from, to) */
                from?: string;
                /** @description RFC 3339 */
                to?: string;
                /** @description upcoming, running, ended or cancelled */
                state?: string;
                /** @description 1..1000 (default 100): the latest-starting, in start order */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        reservations: components["schemas"]["Reservation"][];
                        truncated: boolean;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postReservations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReservationRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReservationsHeld: {
        parameters: {
            query?: {
                /** @description node name (required) */
                node?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        gpu_uuids: string[];
                        gpus: number[];
                        node: string;
                        reservations: components["schemas"]["Reservation"][];
                        user: string;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReservationsById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description reservation id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteReservationsById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description reservation id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchReservationsById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description reservation id */
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    /** Format: date-time */
                    end?: string;
                    enforcement?: {
                        [key: string]: unknown;
                    };
                    /** Format: date-time */
                    start?: string;
                    title?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSecrets: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        secrets: components["schemas"]["Secret"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postSecrets: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    group?: string;
                    name: string;
                    value?: string;
                    value_hex?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Secret"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSecretsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description secret name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getServers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        epoch: number;
                        replicated: boolean;
                        servers: {
                            address: string;
                            id: string;
                            /** Format: date-time */
                            last_renewal: string | null;
                            /** @enum {string} */
                            role: "leader" | "follower";
                            /** Format: date-time */
                            started: string | null;
                            version: string;
                        }[];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSshKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        public_key: string;
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSshNodes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ssh_nodes: components["schemas"]["SshNode"][];
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postSshNodes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    gpu_model?: string;
                    gpus?: number;
                    host_key?: string;
                    labels?: {
                        [key: string]: string;
                    };
                    name: string;
                    url: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        created_ms: number;
                        gpu_model: string;
                        gpus: number;
                        host_key: string;
                        host_key_fingerprint: string;
                        host_key_ms: number;
                        /** @enum {string} */
                        host_key_source: "" | "given" | "fingerprint" | "scanned";
                        labels: {
                            [key: string]: string;
                        };
                        name: string;
                        url: string;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSshNodesByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postSshNodesByNameHostKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description node name */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    host_key?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        created_ms: number;
                        gpu_model: string;
                        gpus: number;
                        host_key: string;
                        host_key_fingerprint: string;
                        host_key_ms: number;
                        /** @enum {string} */
                        host_key_source: "" | "given" | "fingerprint" | "scanned";
                        labels: {
                            [key: string]: string;
                        };
                        name: string;
                        url: string;
                    };
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getStream: {
        parameters: {
            query?: {
                /** @description only this node */
                node?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tokens: components["schemas"]["ApiToken"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    ttl?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiToken"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteTokensById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description token id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsage: {
        parameters: {
            query?: {
                /** @description user (default), group, job, reservation, node or area */
                by?: string;
                /** @description RFC 3339 (default: 30 days before to) */
                from?: string;
                /** @description RFC 3339 (default: now) */
                to?: string;
                /** @description only this node */
                node?: string;
                /** @description by=area: the node label naming areas (default: the first of the server's area_labels) */
                label?: string;
                /** @description only this user (admins; others get only their own) */
                user?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UsageReport"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        users: components["schemas"]["User"][];
                    };
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    disabled?: boolean;
                    display_name?: string;
                    email?: string;
                    groups?: string[];
                    password?: string;
                    /** @enum {string} */
                    role?: "user" | "admin";
                    unix_user?: string;
                    unix_users?: {
                        [key: string]: string;
                    };
                    username: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description username or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description username or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchUsersByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description username or group name */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    current_password?: string;
                    disabled?: boolean;
                    display_name?: string;
                    email?: string;
                    groups?: string[];
                    password?: string;
                    /** @enum {string} */
                    role?: "user" | "admin";
                    unix_user?: string;
                    unix_users?: {
                        [key: string]: string;
                    };
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getViolations: {
        parameters: {
            query?: {
                /** @description only this node */
                node?: string;
                /** @description offender's Unix user or rota username */
                user?: string;
                /** @description open or resolved */
                state?: string;
                /** @description RFC 3339: violations open at or after */
                from?: string;
                /** @description RFC 3339: violations opened before */
                to?: string;
                /** @description 1..1000 (default 100) */
                limit?: number;
                /** @description rows to skip (default 0) */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ViolationList"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getViolationsById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description violation id */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Violation"];
                };
            };
            /** @description Bad request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getHealthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        epoch: number;
                        leader?: string;
                        /** @enum {string} */
                        role: "leader" | "follower";
                        server_id?: string;
                        status: string;
                    };
                };
            };
            /** @description Malformed request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReadyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        connected_agents?: number;
                        leader?: string;
                        nodes?: number;
                        role?: string;
                        status: string;
                    };
                };
            };
            /** @description Malformed request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
