/* hamshoot, sanitizer builds only (-DHS_SANITIZE=ON): dlclose() that keeps the library loaded.
 * Open MPI unloads its components (mca_*.so) in MPI_Finalize; LeakSanitizer then reports their
 * allocations from "<unknown module>", which no suppression can name. Kept loaded, they carry
 * their library names and tools/lsan.supp suppresses Open MPI's own leaks by library, while
 * leaks in hamshoot's code still fail the run. Linked into every executable of that build. */
int dlclose(void *handle);

int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
