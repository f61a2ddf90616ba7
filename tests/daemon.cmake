# Daemon fixtures and integration tests: the fake trainer (a test fixture honouring the trainer
# contract) and the drivers in tests/integration/ that start the real executables on loopback.
add_executable(fake_trainer ${CMAKE_CURRENT_LIST_DIR}/fake_trainer.c)
target_link_libraries(fake_trainer PRIVATE sw_util PkgConfig::GSL PkgConfig::JANSSON)
