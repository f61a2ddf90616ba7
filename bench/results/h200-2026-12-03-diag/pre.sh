# sourced on the device: drivers, the bundle, the dataset
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
tar xJf .data/bundle.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/.devbundle/lib
mkdir -p /tmp/ds; ln -sfn "$PWD/.data/lego" /tmp/ds/nerf_synthetic_lego
export SW_DATASETS=/tmp/ds
B=/tmp/.devbundle/bin
