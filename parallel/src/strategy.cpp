#include "strategies.hpp"

namespace ptyko::parallel {

std::vector<std::string> strategy_names() { return {"full-sync", "neighbor"}; }

template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_strategy(std::string const& name, Communicator const& comm,
                                                      ScanLayout const& layout, StrategyOptions const& options) {
  PTYKO_REQUIRE(options.sync_every >= 1, "--sync-every must be >= 1, got ", options.sync_every);
  if (name == "full-sync") return impl::make_full_sync<T, ExecSpace>(comm, layout);
  if (name == "neighbor" || name == "neighbour") return impl::make_neighbor<T, ExecSpace>(comm, layout, options);
  PTYKO_FAIL("--strategy '", name, "' is not a strategy: use full-sync or neighbor");
}

template std::unique_ptr<Strategy<float, Kokkos::DefaultExecutionSpace>>
make_strategy<float, Kokkos::DefaultExecutionSpace>(std::string const&, Communicator const&, ScanLayout const&,
                                                    StrategyOptions const&);
template std::unique_ptr<Strategy<double, Kokkos::DefaultExecutionSpace>>
make_strategy<double, Kokkos::DefaultExecutionSpace>(std::string const&, Communicator const&, ScanLayout const&,
                                                     StrategyOptions const&);

}  // namespace ptyko::parallel
