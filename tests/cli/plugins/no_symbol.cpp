// A shared library without the plugin symbol: the loader must refuse it.
extern "C" [[gnu::visibility("default")]] int not_a_tilepipe_plugin() {
  return 42;
}
