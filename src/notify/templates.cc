#include "notify/templates.h"

#include <cstdio>

#include "common/time_util.h"

namespace rota::notify {
namespace {

constexpr size_t kMaxSubjectValue = 60;  // bytes of a user value inside a subject
constexpr size_t kMaxCommand = 200;      // bytes of a process command line
constexpr size_t kMaxProcesses = 20;     // processes listed

// Length of a valid UTF-8 sequence at text[i], or 0 when invalid.
size_t ValidSeqLen(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  size_t len = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
  if (len == 0 || i + len > text.size()) return 0;
  uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(text[i + k]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

// One line of valid UTF-8: control characters become spaces, invalid bytes U+FFFD, and
// text longer than max_bytes is cut at a character boundary with "…".
std::string Clean(std::string_view text, size_t max_bytes = std::string::npos) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t len = ValidSeqLen(text, i);
    std::string piece;
    if (len == 0) {
      piece = "\xEF\xBF\xBD";
      len = 1;
    } else if (len == 1 && (static_cast<unsigned char>(text[i]) < 0x20 || text[i] == 0x7f)) {
      piece = " ";
    } else {
      piece = std::string(text.substr(i, len));
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "\xE2\x80\xA6";  // …
      break;
    }
    out += piece;
    i += len;
  }
  return out;
}

std::string H(std::string_view text) { return HtmlEscape(Clean(text)); }

std::string Time(int64_t ms) { return FormatRfc3339(ms); }

// "<server_url>/<path>" when server_url is http(s), else "".
std::string Link(const std::string& server_url, const std::string& path) {
  if (server_url.rfind("http://", 0) != 0 && server_url.rfind("https://", 0) != 0) return "";
  std::string base = Clean(server_url);
  if (base.find(' ') != std::string::npos) return "";
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + path;
}

std::string HtmlLink(const std::string& url, const std::string& label) {
  return "<p><a href=\"" + HtmlEscape(url) + "\">" + HtmlEscape(label) + "</a></p>\n";
}

std::string HtmlPage(const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head>\n"
         "<body style=\"font-family:sans-serif;font-size:14px\">\n" +
         body + "<p style=\"color:#777\">-- rota (automated message)</p>\n</body></html>\n";
}

std::string GpuName(const ViolationNotice& n) {
  std::string s = "GPU " + std::to_string(n.gpu_index);
  if (!n.gpu_uuid.empty()) s += " (" + Clean(n.gpu_uuid) + ")";
  return s;
}

std::string ProcessesText(const ViolationNotice& n) {
  std::string out;
  for (size_t i = 0; i < n.processes.size() && i < kMaxProcesses; ++i) {
    out += "  pid " + std::to_string(n.processes[i].first) + "  " +
           Clean(n.processes[i].second, kMaxCommand) + "\n";
  }
  if (n.processes.size() > kMaxProcesses) {
    out += "  ... and " + std::to_string(n.processes.size() - kMaxProcesses) + " more\n";
  }
  return out;
}

std::string ProcessesHtml(const ViolationNotice& n) {
  std::string out =
      "<table style=\"border-collapse:collapse\">\n<tr><th align=\"left\">pid</th>"
      "<th align=\"left\">command</th></tr>\n";
  for (size_t i = 0; i < n.processes.size() && i < kMaxProcesses; ++i) {
    out += "<tr><td>" + std::to_string(n.processes[i].first) + "</td><td><code>" +
           HtmlEscape(Clean(n.processes[i].second, kMaxCommand)) + "</code></td></tr>\n";
  }
  out += "</table>\n";
  if (n.processes.size() > kMaxProcesses) {
    out += "<p>... and " + std::to_string(n.processes.size() - kMaxProcesses) + " more</p>\n";
  }
  return out;
}

std::string ReservationLine(const ViolationNotice& n) {
  return "\"" + Clean(n.reservation_title) + "\" by " + Clean(n.reservation_owner) + ", " +
         Time(n.reservation_start_ms) + " .. " + Time(n.reservation_end_ms);
}

// "Next step: <action> at <time>." or that nothing is scheduled; plus the dry-run note.
std::string NextStep(const ViolationNotice& n) {
  std::string out;
  if (n.next_action.empty()) {
    out = "No further automatic action is scheduled.";
  } else {
    out = "Next step: rota will " + Clean(n.next_action) +
          (n.next_action_ms > 0 ? " at " + Time(n.next_action_ms) : "") + ".";
  }
  if (n.dry_run) {
    out +=
        " Enforcement runs in dry-run mode: rota only reports and will not act on "
        "the processes itself.";
  }
  return out;
}

std::string SubjectPrefix(bool dry_run) { return dry_run ? "[rota] (dry run) " : "[rota] "; }

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Email RenderViolationForOffender(const ViolationNotice& n) {
  Email e;
  e.subject = SubjectPrefix(n.dry_run) + "Please stop using GPU " + std::to_string(n.gpu_index) +
              " on " + Clean(n.node, kMaxSubjectValue) + " \xE2\x80\x94 it is reserved";
  const std::string link = Link(n.server_url, "violations/" + std::to_string(n.violation_id));
  e.text = "Hello " + Clean(n.offender_user) + ",\n\n" + "your processes are using " + GpuName(n) +
           " on node " + Clean(n.node) +
           ", which is reserved for someone else:\n\n  Reservation: " + ReservationLine(n) +
           "\n\nProcesses:\n" + ProcessesText(n) +
           "\nPlease stop them now and use a GPU that is free or reserved for you.\n" +
           NextStep(n) + "\n" + (link.empty() ? "" : "\nDetails: " + link + "\n") +
           "\n-- \nrota (automated message, violation " + std::to_string(n.violation_id) + ")\n";
  e.html = HtmlPage(
      "<p>Hello " + H(n.offender_user) + ",</p>\n<p>your processes are using <b>" +
      HtmlEscape(GpuName(n)) + "</b> on node <b>" + H(n.node) +
      "</b>, which is reserved for someone else:</p>\n<p>Reservation: &quot;" +
      H(n.reservation_title) + "&quot; by " + H(n.reservation_owner) + ", " +
      Time(n.reservation_start_ms) + " .. " + Time(n.reservation_end_ms) + "</p>\n" +
      ProcessesHtml(n) +
      "<p><b>Please stop them now</b> and use a GPU that is free or reserved for you.</p>\n"
      "<p>" +
      HtmlEscape(NextStep(n)) + "</p>\n" +
      (link.empty() ? "" : HtmlLink(link, "Violation " + std::to_string(n.violation_id))));
  return e;
}

Email RenderViolationForOwner(const ViolationNotice& n) {
  Email e;
  e.subject = SubjectPrefix(n.dry_run) + Clean(n.offender_user, kMaxSubjectValue) +
              " is using GPU " + std::to_string(n.gpu_index) + " on " +
              Clean(n.node, kMaxSubjectValue) + " during reservation \"" +
              Clean(n.reservation_title, kMaxSubjectValue) + "\"";
  const std::string link = Link(n.server_url, "violations/" + std::to_string(n.violation_id));
  e.text = "Hello,\n\nuser " + Clean(n.offender_user) + " is using " + GpuName(n) + " on node " +
           Clean(n.node) + " during this reservation:\n\n  Reservation: " + ReservationLine(n) +
           "\n\nProcesses:\n" + ProcessesText(n) + "\n" + Clean(n.offender_user) +
           " has been asked to stop. " + NextStep(n) + "\n" +
           (link.empty() ? "" : "\nDetails: " + link + "\n") +
           "\n-- \nrota (automated message, violation " + std::to_string(n.violation_id) + ")\n";
  e.html = HtmlPage(
      "<p>Hello,</p>\n<p>user <b>" + H(n.offender_user) + "</b> is using <b>" +
      HtmlEscape(GpuName(n)) + "</b> on node <b>" + H(n.node) +
      "</b> during this reservation:</p>\n<p>Reservation: &quot;" + H(n.reservation_title) +
      "&quot; by " + H(n.reservation_owner) + ", " + Time(n.reservation_start_ms) + " .. " +
      Time(n.reservation_end_ms) + "</p>\n" + ProcessesHtml(n) + "<p>" + H(n.offender_user) +
      " has been asked to stop. " + HtmlEscape(NextStep(n)) + "</p>\n" +
      (link.empty() ? "" : HtmlLink(link, "Violation " + std::to_string(n.violation_id))));
  return e;
}

Email RenderIdleReservation(const IdleReservationNotice& n) {
  std::string gpus;
  for (size_t i = 0; i < n.gpus.size(); ++i) {
    gpus += (i > 0 ? ", " : "") + std::to_string(n.gpus[i]);
  }
  std::string gpu_text = (n.gpus.size() == 1 ? "GPU " : "GPUs ") + gpus;
  char util[32];
  std::snprintf(util, sizeof(util), "%.1f %%", n.avg_util);
  const bool released = n.released_ms > 0;
  const std::string release = released ? "rota released it at " + Time(n.released_ms) +
                                             ": it has ended and its GPUs are free for others."
                              : n.will_release_ms > 0 ? "rota will release it automatically at " +
                                                            Time(n.will_release_ms) + "."
                                                      : "It will not be released automatically.";
  const std::string advice = released ? "If you still need GPUs, please make a new reservation."
                                      : "If you no longer need it, please release it so others "
                                        "can use the GPUs.";
  const std::string link = Link(n.server_url, "reservations/" + std::to_string(n.reservation_id));
  const std::string id = std::to_string(n.reservation_id);

  Email e;
  e.subject = "[rota] Your reservation \"" + Clean(n.title, kMaxSubjectValue) + "\" on " +
              Clean(n.node, kMaxSubjectValue) +
              (released                ? " was idle and has been released"
               : n.will_release_ms > 0 ? " is idle and will be released"
                                       : " is idle");
  e.text = "Hello " + Clean(n.owner) + ",\n\nyour reservation " + id + " \"" + Clean(n.title) +
           "\" on node " + Clean(n.node) + " (" + gpu_text + ") " +
           (released ? "was" : "has been") + " idle since " + Time(n.idle_since_ms) +
           " (average GPU utilization " + util + ").\n\n" + release + "\n" + advice + "\n" +
           (link.empty() ? "" : "\nReservation: " + link + "\n") +
           "\n-- \nrota (automated message)\n";
  e.html = HtmlPage("<p>Hello " + H(n.owner) + ",</p>\n<p>your reservation " + id + " &quot;" +
                    H(n.title) + "&quot; on node <b>" + H(n.node) + "</b> (" + gpu_text + ") " +
                    (released ? "was" : "has been") + " idle since " + Time(n.idle_since_ms) +
                    " (average GPU utilization " + HtmlEscape(util) + ").</p>\n<p>" +
                    HtmlEscape(release) + "</p>\n<p>" + HtmlEscape(advice) + "</p>\n" +
                    (link.empty() ? "" : HtmlLink(link, "Reservation " + id)));
  return e;
}

}  // namespace rota::notify
