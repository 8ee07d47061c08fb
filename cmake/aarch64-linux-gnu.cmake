# Toolchain for 64-bit Arm Linux, built on x86-64 Debian (`make arm64`, scripts/arm64.sh):
# Debian's cross compiler, the arm64 libraries installed beside the host's through multiarch
# (dpkg --add-architecture arm64), and the tests run under qemu-aarch64-static, which finds
# the arm64 loader and libraries in the host's /lib and /usr/lib/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_package and find_library look in /usr/lib/aarch64-linux-gnu, not the host's libraries.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
