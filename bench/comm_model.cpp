// Communication-volume model tool: prints, as markdown, the bytes per epoch
// and memory per rank of full-sync and neighbor (sync-every 1 and 4)
// extrapolated to 64-1024 ranks (GPUs) and objects of 10k-100k pixels on a
// side, from the model in comm_model.hpp (documented there and in
// docs/performance.md).
//
//   comm_model [--detector 128] [--modes 2] [--local-batch 16] [--precision 4]
//              [--solver lsqml] [--step 0] [--sides 10000,30000,100000]
//              [--ranks 64,128,256,512,1024] [--link-gbs 25] [--latency-us 5]
//
// Assumptions printed with the table: N = (side / step)^2 frames on a square
// raster of the object (step 0: 70 % overlap of a probe of 0.45 D diameter,
// the simulation's default), a global batch of local-batch x P positions
// (each rank keeps its per-batch work constant as P grows), analytic
// rectangular tiles. "comm s" is the time the bytes take at --link-gbs GB/s
// per rank (both directions counted, as the bytes are). "collectives" are
// neighbor k=1's all-reduces and broadcasts per epoch (comm_model.hpp),
// "latency s" their cost at --latency-us per round of log2 P rounds each:
// what a batch pays for meeting every rank, whatever its bytes.
// The model is validated against measured bytes by strategy_bench (model
// exact / model analytic columns) at P = 2 and 4.

#include "comm_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace ptyko::bench;

std::string arg(int argc, char** argv, std::string const& name, std::string const& fallback) {
  std::string const key = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind(key, 0) == 0) return a.substr(key.size());
    if (a == "--" + name && i + 1 < argc) return argv[i + 1];
  }
  return fallback;
}

std::vector<double> list(std::string const& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stod(item));
  return out;
}

std::string human(double bytes) {
  char const* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g %s", bytes, units[u]);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: comm_model [--detector D] [--modes M] [--local-batch b] [--precision 4|8] [--solver S]\n"
                  "                  [--step px] [--sides a,b,...] [--ranks p,q,...] [--link-gbs G]\n"
                  "                  [--latency-us a]\n");
      return 0;
    }
  int const D = std::stoi(arg(argc, argv, "detector", "128"));
  int const M = std::stoi(arg(argc, argv, "modes", "2"));
  int const local_batch = std::stoi(arg(argc, argv, "local-batch", "16"));
  int const precision = std::stoi(arg(argc, argv, "precision", "4"));
  std::string const solver = arg(argc, argv, "solver", "lsqml");
  double step = std::stod(arg(argc, argv, "step", "0"));
  if (step <= 0) step = 0.3 * 0.45 * D;
  auto const sides = list(arg(argc, argv, "sides", "10000,30000,100000"));
  auto const ranks = list(arg(argc, argv, "ranks", "64,128,256,512,1024"));
  double const link = std::stod(arg(argc, argv, "link-gbs", "25")) * 1e9;
  // A collective's latency: log2 P rounds of a message's (recursive
  // doubling), alpha each; the bytes are in "comm s" already.
  double const alpha = std::stod(arg(argc, argv, "latency-us", "5")) * 1e-6;

  std::printf("\n### Communication model: %s, D = %d, %d modes, float%d, scan step %.1f px, global batch = %d x P\n\n",
              solver.c_str(), D, M, 8 * precision, step, local_batch);
  std::printf("Per rank and epoch; memory = device buffers per rank; comm s at %.0f GB/s per rank; collectives "
              "(neighbor k=1) and their latency s at %.3g us per round, log2 P rounds each.\n\n",
              link / 1e9, alpha * 1e6);
  std::printf("| object | frames N | P | full-sync bytes | comm s | neighbor k=1 bytes | comm s | collectives | latency s | "
              "neighbor k=4 bytes | full-sync memory | neighbor memory | frames/rank |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (double side : sides) {
    double const N = std::floor(side / step) * std::floor(side / step);
    for (double P : ranks) {
      ModelInput in;
      in.frames = N;
      in.D = D;
      in.modes = M;
      in.batch = int(local_batch * P);
      in.precision = precision;
      in.height = side;
      in.width = side;
      in.ranks = int(P);
      in.solver = solver;
      auto const g = analytic_geometry(in);
      auto const full = model(in, "full-sync", in.height * in.width, 0);
      auto const nb1 = model(in, "neighbor", g.tile_area, g.overlap_area);
      ModelInput in4 = in;
      in4.sync_every = 4;
      auto const nb4 = model(in4, "neighbor", g.tile_area, g.overlap_area);
      std::printf("| %.0fk^2 | %.3g | %.0f | %s | %.3g | %s | %.3g | %.0f | %.3g | %s | %s | %s | %.0f |\n", side / 1000,
                  N, P, human(full.bytes_per_epoch).c_str(), full.bytes_per_epoch / link,
                  human(nb1.bytes_per_epoch).c_str(), nb1.bytes_per_epoch / link, nb1.collectives,
                  nb1.collectives * alpha * std::ceil(std::log2(P)), human(nb4.bytes_per_epoch).c_str(),
                  human(full.memory).c_str(), human(nb1.memory).c_str(), N / P);
    }
  }
  std::fflush(stdout);
  return 0;
}
