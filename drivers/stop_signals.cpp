#include "stop_signals.hpp"

#include <unistd.h>

#include <csignal>

namespace ptyko::drivers {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
int g_signal_rank = 0;  // only rank 0 says that it heard the signal

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal == 0) g_stop_signal = sig;
  if (g_signal_rank == 0) {
    static char const msg[] =
        "\nptyko: stop requested: finishing this epoch, then writing a checkpoint (signal again to stop at once)\n";
    ssize_t const written = ::write(2, msg, sizeof(msg) - 1);  // async-signal-safe
    (void)written;
  }
}

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGUSR1};

}  // namespace

struct StopSignals::Saved {
  struct sigaction old[3];
};

StopSignals::StopSignals(int rank) : m_saved(std::make_unique<Saved>()) {
  g_signal_rank = rank;
  g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // a second signal: the default action
  for (int k = 0; k < 3; ++k) sigaction(k_signals[k], &sa, &m_saved->old[k]);
}

StopSignals::~StopSignals() {
  for (int k = 0; k < 3; ++k) sigaction(k_signals[k], &m_saved->old[k], nullptr);
}

int requested_stop() { return int(g_stop_signal); }

char const* signal_name(int s) {
  switch (s) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}

}  // namespace ptyko::drivers
