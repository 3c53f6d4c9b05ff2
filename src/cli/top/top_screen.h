#pragma once
// rota top on a terminal: the alternate screen, sized to the terminal (and
// re-sized with it), redrawn from the live event stream at most once per
// refresh period and at once on a key. Keys are top_view.h's. The terminal is
// given back as it was on q, Ctrl-C, SIGTERM or SIGHUP.
//
// Threads: one reads the event stream (reconnecting when it is lost), one
// polls the user's jobs every few seconds (when signed in); the calling thread
// reads the keys and draws. They share only the last events and jobs, under a
// mutex held for copies, never over I/O.

#include <string>

#include "cli/client.h"
#include "cli/commands.h"

namespace rota::cli::top {

// Runs until the user quits (or `top.frames` frames were drawn). `user` is the
// signed-in user ("" when none: the jobs panel says how to sign in). Returns
// the process exit code; 1 with a message when the terminal cannot be set up.
int RunScreen(const ApiClient& client, const std::string& stream_url, const std::string& user,
              const TopOptions& top);

}  // namespace rota::cli::top
