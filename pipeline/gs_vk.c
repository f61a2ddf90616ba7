/* gs_vk.c: the Vulkan compute device layer (see gs_vk.h): instance and device choice, buffers with
 * staging, one-shot command buffers, compute kernels with push descriptors, the on-disk pipeline
 * cache and the timestamp-query stage timer. Every Vulkan failure becomes SW_EDEVICE with a line
 * that says what failed and where. */
#include "gs_vk.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_shared.h"
#include "sw_fs.h"
#include "sw_log.h"

/* The layouts in gs_shared.h must have the same size in C as in std430 GLSL. */
_Static_assert(sizeof(struct gs_splat2d) == 64, "gs_splat2d is 64 bytes in std430");
_Static_assert(sizeof(struct gs_pc_project) == 100, "gs_pc_project layout");
_Static_assert(sizeof(struct gs_pc_bin) == 16, "gs_pc_bin layout");
_Static_assert(sizeof(struct gs_pc_scan) == 16, "gs_pc_scan layout");
_Static_assert(sizeof(struct gs_pc_ranges) == 16, "gs_pc_ranges layout");
_Static_assert(sizeof(struct gs_pc_bucket) == 16, "gs_pc_bucket layout");
_Static_assert(sizeof(struct gs_pc_sort) == 32, "gs_pc_sort layout");
_Static_assert(sizeof(struct gs_pc_raster) == 32, "gs_pc_raster layout");

#define INSTALL_HINT                                                                               \
  "install a Vulkan driver: mesa-vulkan-drivers on Debian/Ubuntu (CPU lavapipe, Intel, AMD), "     \
  "MoltenVK on macOS (brew install molten-vk vulkan-loader), or the NVIDIA driver"

struct gs_vk {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool pool;
  VkFence fence;
  VkPipelineCache cache;
  char cache_path[1024];
  VkPhysicalDeviceMemoryProperties mem_props;
  struct gs_vk_device_info info;
  int staging;             /* device-local buffers need staging copies */
  int force_staging;       /* opts->force_staging or GS_VK_FORCE_STAGING=1 */
  int poison;              /* GS_VK_POISON set: new buffers are filled with poison_word */
  struct gs_vk_buf *stage; /* host-visible, grow-only: every staged copy (gs_vk_buf_copy) */
  uint32_t poison_word;
  PFN_vkCmdPushDescriptorSetKHR push_descriptor;
  uint64_t allocs;     /* buffer allocations so far (fault injection) */
  uint64_t fail_alloc; /* 0 or the 1-based allocation that fails */
};

struct gs_vk_kernel {
  gs_vk_t *vk;
  char name[32];
  uint32_t n_buffers;
  uint32_t push_size;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
};

static const char *vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_NOT_READY: return "VK_NOT_READY";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_INCOMPLETE: return "VK_INCOMPLETE";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
  default: return "VkResult error";
  }
}

static int vkfail(struct sw_err *err, VkResult r, const char *what) {
  return sw_err_set(err, SW_EDEVICE, "%s failed: %s (%d)", what, vk_result_name(r), (int)r);
}

const char *gs_vk_kind_name(enum gs_vk_kind kind) {
  switch (kind) {
  case GS_VK_KIND_DISCRETE: return "discrete";
  case GS_VK_KIND_INTEGRATED: return "integrated";
  case GS_VK_KIND_VIRTUAL: return "virtual";
  case GS_VK_KIND_CPU: return "cpu";
  default: return "other";
  }
}

/* ---- instance and device discovery ---- */

static int has_instance_ext(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || !n) return 0;
  VkExtensionProperties *p = calloc(n, sizeof *p);
  if (!p) return 0;
  int found = 0;
  if (vkEnumerateInstanceExtensionProperties(NULL, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = !strcmp(p[i].extensionName, name);
  free(p);
  return found;
}

static int has_device_ext(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n) return 0;
  VkExtensionProperties *p = calloc(n, sizeof *p);
  if (!p) return 0;
  int found = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = !strcmp(p[i].extensionName, name);
  free(p);
  return found;
}

static int create_instance(VkInstance *out, struct sw_err *err) {
  int rc = gs_vk_loader_open(err);
  if (rc) return rc;
  uint32_t api = 0;
  /* vkEnumerateInstanceVersion is a 1.1 entry point; a 1.0 loader does not export it. */
  if (vkEnumerateInstanceVersion(&api) != VK_SUCCESS || api < VK_API_VERSION_1_2)
    return sw_err_set(err, SW_EDEVICE,
                      "the Vulkan loader supports only Vulkan %u.%u; 1.2 or newer is needed: %s",
                      VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), INSTALL_HINT);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "splat-train",
                           .apiVersion = VK_API_VERSION_1_2};
  const char *exts[1];
  uint32_t n_ext = 0;
  VkInstanceCreateFlags flags = 0;
  /* MoltenVK is a portability driver: it is only enumerated when the application opts in. */
  if (has_instance_ext(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    exts[n_ext++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .flags = flags,
                             .pApplicationInfo = &app,
                             .enabledExtensionCount = n_ext,
                             .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateInstance(&ci, NULL, out);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    return sw_err_set(err, SW_EDEVICE, "no Vulkan driver found (%s): %s", vk_result_name(r),
                      INSTALL_HINT);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreateInstance");
  return 0;
}

static void describe(VkPhysicalDevice pd, uint32_t index, struct gs_vk_device_info *d) {
  memset(d, 0, sizeof *d);
  d->index = index;
  /* The subgroup size range is core in 1.3 and an extension before; without either the default
   * size is the only one. */
  VkPhysicalDeviceSubgroupSizeControlProperties ssc = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(pd, &basic);
  int has_ssc = basic.apiVersion >= VK_API_VERSION_1_3 ||
                has_device_ext(pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  VkPhysicalDeviceDriverProperties drv = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = has_ssc ? &ssc : NULL};
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &drv};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  const VkPhysicalDeviceProperties *p = &p2.properties;
  snprintf(d->name, sizeof d->name, "%s", p->deviceName);
  if (drv.driverName[0])
    snprintf(d->driver, sizeof d->driver, "%s %s", drv.driverName, drv.driverInfo);
  else
    snprintf(d->driver, sizeof d->driver, "driver version 0x%x", p->driverVersion);
  d->api_version = p->apiVersion;
  snprintf(d->api, sizeof d->api, "vulkan %u.%u", VK_API_VERSION_MAJOR(p->apiVersion),
           VK_API_VERSION_MINOR(p->apiVersion));
  switch (p->deviceType) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d->kind = GS_VK_KIND_DISCRETE; break;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d->kind = GS_VK_KIND_INTEGRATED; break;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: d->kind = GS_VK_KIND_VIRTUAL; break;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: d->kind = GS_VK_KIND_CPU; break;
  default: d->kind = GS_VK_KIND_OTHER; break;
  }
  d->vendor_id = p->vendorID;
  d->device_id = p->deviceID;
  d->subgroup_size = sg.subgroupSize;
  d->min_subgroup_size = sg.subgroupSize;
  if (has_ssc && ssc.minSubgroupSize && ssc.minSubgroupSize < sg.subgroupSize)
    d->min_subgroup_size = ssc.minSubgroupSize;
  d->subgroup_ballot = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                       (sg.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT);
  d->subgroup_shuffle_up = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                           (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT) &&
                           (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  d->subgroup_shuffle = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                        (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  d->push_descriptor = has_device_ext(pd, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (has_device_ext(pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &af};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    d->float_atomic_add = af.shaderBufferFloat32AtomicAdd != 0;
    d->shared_float_atomic_add = af.shaderSharedFloat32AtomicAdd != 0;
  }
  /* Unified memory: CPU and integrated devices share the host's memory, so host-visible buffers
   * cost nothing; discrete GPUs get device-local buffers and staging copies. */
  d->unified_memory = d->kind != GS_VK_KIND_DISCRETE;
  d->timestamp_period = p->limits.timestampPeriod;
  d->max_shared_memory = p->limits.maxComputeSharedMemorySize;
  for (int i = 0; i < 3; i++) d->max_workgroup_count[i] = p->limits.maxComputeWorkGroupCount[i];
  d->max_storage_buffer_range = p->limits.maxStorageBufferRange;
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties *q = calloc(nq ? nq : 1, sizeof *q);
  if (q) {
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, q);
    for (uint32_t i = 0; i < nq; i++)
      if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].timestampValidBits) d->timestamps = 1;
    free(q);
  }
}

static int enumerate(VkInstance inst, VkPhysicalDevice **pds, uint32_t *n, struct sw_err *err) {
  *pds = NULL;
  *n = 0;
  VkResult r = vkEnumeratePhysicalDevices(inst, n, NULL);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkEnumeratePhysicalDevices");
  if (*n == 0)
    return sw_err_set(err, SW_EDEVICE, "the Vulkan loader found no device: %s", INSTALL_HINT);
  *pds = calloc(*n, sizeof **pds);
  if (!*pds) return sw_err_set(err, SW_ENOMEM, "out of memory listing devices");
  r = vkEnumeratePhysicalDevices(inst, n, *pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(*pds);
    *pds = NULL;
    return vkfail(err, r, "vkEnumeratePhysicalDevices");
  }
  return 0;
}

int gs_vk_list_devices(struct gs_vk_device_info **out, uint32_t *n_out, struct sw_err *err) {
  *out = NULL;
  *n_out = 0;
  VkInstance inst;
  int rc = create_instance(&inst, err);
  if (rc) return rc;
  VkPhysicalDevice *pds;
  uint32_t n;
  rc = enumerate(inst, &pds, &n, err);
  if (!rc) {
    *out = calloc(n, sizeof **out);
    if (!*out) rc = sw_err_set(err, SW_ENOMEM, "out of memory listing devices");
    for (uint32_t i = 0; !rc && i < n; i++) describe(pds[i], i, &(*out)[i]);
    if (!rc) *n_out = n;
  }
  free(pds);
  vkDestroyInstance(inst, NULL);
  return rc;
}

static int kind_rank(enum gs_vk_kind k) {
  switch (k) {
  case GS_VK_KIND_DISCRETE: return 0;
  case GS_VK_KIND_INTEGRATED: return 1;
  case GS_VK_KIND_VIRTUAL: return 2;
  case GS_VK_KIND_CPU: return 3;
  default: return 4;
  }
}

static int ci_contains(const char *hay, const char *needle) {
  size_t hn = strlen(hay), nn = strlen(needle);
  for (size_t i = 0; i + nn <= hn; i++) {
    size_t j = 0;
    while (j < nn && tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j])) j++;
    if (j == nn) return 1;
  }
  return 0;
}

/* Picks a device by the selector (index or name substring) or by kind preference. */
static int choose(const struct gs_vk_device_info *infos, uint32_t n, const char *sel,
                  uint32_t *pick, struct sw_err *err) {
  if (sel && *sel) {
    char *end;
    unsigned long idx = strtoul(sel, &end, 10);
    if (*end == '\0') {
      if (idx >= n)
        return sw_err_set(err, SW_ENOTFOUND, "device index %lu out of range: %u device(s) found",
                          idx, n);
      *pick = (uint32_t)idx;
      return 0;
    }
    for (uint32_t i = 0; i < n; i++)
      if (ci_contains(infos[i].name, sel)) {
        *pick = i;
        return 0;
      }
    char names[400] = "";
    for (uint32_t i = 0; i < n; i++) {
      size_t l = strlen(names);
      snprintf(names + l, sizeof names - l, "%s%u: %s", i ? ", " : "", i, infos[i].name);
    }
    return sw_err_set(err, SW_ENOTFOUND, "no Vulkan device matches '%s' (found %s)", sel, names);
  }
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; i++)
    if (kind_rank(infos[i].kind) < kind_rank(infos[best].kind)) best = i;
  *pick = best;
  return 0;
}

/* ---- pipeline cache ---- */

static void cache_default_path(gs_vk_t *vk, const struct gs_vk_opts *opts) {
  const char *p = opts && opts->pipeline_cache ? opts->pipeline_cache : getenv("GS_PIPELINE_CACHE");
  if (p) {
    snprintf(vk->cache_path, sizeof vk->cache_path, "%s", p);
    return;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char dir[900];
  if (xdg && *xdg)
    snprintf(dir, sizeof dir, "%s/splatsweep", xdg);
  else if (home && *home)
    snprintf(dir, sizeof dir, "%s/.cache/splatsweep", home);
  else
    return; /* nowhere to keep it: in-memory cache only */
  snprintf(vk->cache_path, sizeof vk->cache_path, "%s/pipeline-%04x-%04x.bin", dir,
           vk->info.vendor_id, vk->info.device_id);
}

/* Loads the cache file when its header matches this device; anything else starts empty (a stale
 * or foreign cache is not an error, only a slower start). */
static int cache_open(gs_vk_t *vk, struct sw_err *err) {
  char *data = NULL;
  size_t len = 0;
  if (vk->cache_path[0] && sw_fs_read_all(vk->cache_path, &data, &len, NULL) == 0) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(vk->phys, &p);
    uint32_t hdr[4];
    int ok = len >= 16 + VK_UUID_SIZE;
    if (ok) {
      memcpy(hdr, data, sizeof hdr);
      ok = hdr[0] >= 16 + VK_UUID_SIZE && hdr[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           hdr[2] == p.vendorID && hdr[3] == p.deviceID &&
           !memcmp(data + 16, p.pipelineCacheUUID, VK_UUID_SIZE);
    }
    if (!ok) {
      len = 0;
      sw_log_info("pipeline cache %s is for another device or driver; starting afresh",
                  vk->cache_path);
    }
  }
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = len,
                                  .pInitialData = len ? data : NULL};
  VkResult r = vkCreatePipelineCache(vk->device, &ci, NULL, &vk->cache);
  free(data);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreatePipelineCache");
  return 0;
}

static void cache_save(gs_vk_t *vk) {
  if (!vk->cache || !vk->cache_path[0]) return;
  size_t len = 0;
  if (vkGetPipelineCacheData(vk->device, vk->cache, &len, NULL) != VK_SUCCESS || !len) return;
  void *data = malloc(len);
  if (!data) return;
  if (vkGetPipelineCacheData(vk->device, vk->cache, &len, data) == VK_SUCCESS) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", vk->cache_path);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = '\0';
      if (dir[0]) sw_fs_mkdir_p(dir, NULL);
    }
    struct sw_err e = {0};
    if (sw_fs_write_atomic(vk->cache_path, data, len, &e))
      sw_log_warn("pipeline cache not saved: %s", e.msg);
  }
  free(data);
}

/* ---- open / close ---- */

static int create_device(gs_vk_t *vk, struct sw_err *err) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, NULL);
  VkQueueFamilyProperties *q = calloc(nq ? nq : 1, sizeof *q);
  if (!q) return sw_err_set(err, SW_ENOMEM, "out of memory");
  vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, q);
  /* Prefer a compute-only family (dedicated async compute on discrete GPUs), then any compute
   * family; both must support timestamps for stage timing when possible. */
  int64_t pick = -1;
  for (uint32_t i = 0; i < nq && pick < 0; i++)
    if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        q[i].timestampValidBits)
      pick = i;
  for (uint32_t i = 0; i < nq && pick < 0; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) pick = i;
  int ts = pick >= 0 && q[pick].timestampValidBits > 0;
  free(q);
  if (pick < 0)
    return sw_err_set(err, SW_EDEVICE, "device '%s' has no compute queue", vk->info.name);
  vk->queue_family = (uint32_t)pick;
  vk->info.timestamps = ts;

  const char *exts[4];
  uint32_t n_ext = 0;
  exts[n_ext++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  /* A portability driver (MoltenVK) requires this extension to be enabled when it offers it. */
  if (has_device_ext(vk->phys, "VK_KHR_portability_subset"))
    exts[n_ext++] = "VK_KHR_portability_subset";
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  int atomic_float = has_device_ext(vk->phys, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (atomic_float) {
    exts[n_ext++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
    af.shaderBufferFloat32AtomicAdd = vk->info.float_atomic_add;
    af.shaderSharedFloat32AtomicAdd = vk->info.shared_float_atomic_add;
  }
  /* Features the kernels use where the device has them: 16-bit storage/arithmetic are not
   * needed (the f16 accumulator variant rounds through packHalf2x16). */
  VkPhysicalDeviceVulkan12Features f12 = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .pNext = atomic_float ? &af : NULL};
  VkPhysicalDeviceVulkan12Features have12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 have = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &have12};
  vkGetPhysicalDeviceFeatures2(vk->phys, &have);
  f12.hostQueryReset = have12.hostQueryReset;
  f12.shaderFloat16 = have12.shaderFloat16;
  f12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
  f12.bufferDeviceAddress = have12.bufferDeviceAddress;
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &f12};
  feats.features.shaderInt64 = have.features.shaderInt64;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = vk->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &feats,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = n_ext,
                            .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateDevice(vk->phys, &dci, NULL, &vk->device);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreateDevice");
  vkGetDeviceQueue(vk->device, vk->queue_family, 0, &vk->queue);
  vk->push_descriptor =
      (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(vk->device, "vkCmdPushDescriptorSetKHR");
  if (!vk->push_descriptor)
    return sw_err_set(err, SW_EDEVICE, "vkCmdPushDescriptorSetKHR missing on '%s'", vk->info.name);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = vk->queue_family};
  r = vkCreateCommandPool(vk->device, &pci, NULL, &vk->pool);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreateCommandPool");
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(vk->device, &fci, NULL, &vk->fence);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreateFence");
  return 0;
}

int gs_vk_open(gs_vk_t **out, const struct gs_vk_opts *opts, struct sw_err *err) {
  *out = NULL;
  gs_vk_t *vk = calloc(1, sizeof *vk);
  if (!vk) return sw_err_set(err, SW_ENOMEM, "out of memory opening the device");
  const char *fail = getenv("GS_VK_FAIL_ALLOC");
  if (fail && *fail) vk->fail_alloc = strtoull(fail, NULL, 10);
  const char *poison = getenv("GS_VK_POISON");
  if (poison && *poison) {
    vk->poison = 1;
    vk->poison_word = (uint32_t)strtoul(poison, NULL, 0);
  }
  int rc = create_instance(&vk->instance, err);
  VkPhysicalDevice *pds = NULL;
  struct gs_vk_device_info *infos = NULL;
  uint32_t n = 0, pick = 0;
  if (!rc) rc = enumerate(vk->instance, &pds, &n, err);
  if (!rc && !(infos = calloc(n, sizeof *infos)))
    rc = sw_err_set(err, SW_ENOMEM, "out of memory listing devices");
  for (uint32_t i = 0; !rc && i < n; i++) describe(pds[i], i, &infos[i]);
  if (!rc) {
    const char *sel = opts && opts->device ? opts->device : getenv("GS_DEVICE");
    rc = choose(infos, n, sel, &pick, err);
  }
  if (!rc) {
    vk->phys = pds[pick];
    vk->info = infos[pick];
    if (!vk->info.push_descriptor)
      rc = sw_err_set(err, SW_EDEVICE,
                      "device '%s' lacks VK_KHR_push_descriptor, which the pipeline needs; "
                      "update its driver",
                      vk->info.name);
    else if (vk->info.api_version < VK_API_VERSION_1_2)
      rc = sw_err_set(err, SW_EDEVICE, "device '%s' supports only %s; Vulkan 1.2 is needed",
                      vk->info.name, vk->info.api);
  }
  free(pds);
  free(infos);
  if (!rc) {
    vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem_props);
    const char *fs = getenv("GS_VK_FORCE_STAGING");
    vk->force_staging = (opts && opts->force_staging) || (fs && !strcmp(fs, "1"));
    vk->staging = !vk->info.unified_memory || vk->force_staging;
    rc = create_device(vk, err);
  }
  if (!rc) {
    cache_default_path(vk, opts);
    rc = cache_open(vk, err);
  }
  if (rc) {
    sw_err_prefix(err, "opening the Vulkan device");
    gs_vk_close(&vk);
    return rc;
  }
  sw_log_debug("vulkan device %u: %s (%s, %s, subgroup %u)", vk->info.index, vk->info.name,
               gs_vk_kind_name(vk->info.kind), vk->info.driver, vk->info.subgroup_size);
  *out = vk;
  return 0;
}

void gs_vk_close(gs_vk_t **vkp) {
  if (!vkp || !*vkp) return;
  gs_vk_t *vk = *vkp;
  if (vk->device) {
    vkDeviceWaitIdle(vk->device);
    gs_vk_buf_destroy(&vk->stage);
    cache_save(vk);
    if (vk->cache) vkDestroyPipelineCache(vk->device, vk->cache, NULL);
    if (vk->fence) vkDestroyFence(vk->device, vk->fence, NULL);
    if (vk->pool) vkDestroyCommandPool(vk->device, vk->pool, NULL);
    vkDestroyDevice(vk->device, NULL);
  }
  if (vk->instance) vkDestroyInstance(vk->instance, NULL);
  free(vk);
  *vkp = NULL;
}

const struct gs_vk_device_info *gs_vk_info(const gs_vk_t *vk) { return &vk->info; }
VkDevice gs_vk_device(const gs_vk_t *vk) { return vk->device; }
VkQueue gs_vk_queue(const gs_vk_t *vk) { return vk->queue; }
uint32_t gs_vk_queue_family(const gs_vk_t *vk) { return vk->queue_family; }

/* ---- buffers ---- */

static int find_memory(const gs_vk_t *vk, uint32_t bits, VkMemoryPropertyFlags want,
                       VkMemoryPropertyFlags avoid) {
  for (uint32_t i = 0; i < vk->mem_props.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = vk->mem_props.memoryTypes[i].propertyFlags;
    if ((bits & (1u << i)) && (f & want) == want && !(f & avoid)) return (int)i;
  }
  return -1;
}

static int buf_alloc(gs_vk_t *vk, VkDeviceSize size, int host, struct gs_vk_buf *b,
                     struct sw_err *err) {
  vk->allocs++;
  if (vk->fail_alloc && vk->allocs == vk->fail_alloc)
    return sw_err_set(err, SW_EDEVICE,
                      "allocating %llu bytes for buffer '%s' failed: "
                      "VK_ERROR_OUT_OF_DEVICE_MEMORY (injected by GS_VK_FAIL_ALLOC)",
                      (unsigned long long)size, b->label);
  VkBufferCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(vk->device, &ci, NULL, &b->buf);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(vk->device, b->buf, &req);
  int type;
  if (host) {
    /* Cached host memory reads back fast; coherent keeps us free of flush/invalidate calls. */
    type = find_memory(vk, req.memoryTypeBits,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                       0);
    if (type < 0)
      type = find_memory(vk, req.memoryTypeBits,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         0);
  } else {
    type = find_memory(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    if (type < 0)
      type = find_memory(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  }
  if (type < 0) {
    vkDestroyBuffer(vk->device, b->buf, NULL);
    b->buf = VK_NULL_HANDLE;
    return sw_err_set(err, SW_EDEVICE, "no suitable memory type for buffer '%s'", b->label);
  }
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = req.size,
                             .memoryTypeIndex = (uint32_t)type};
  r = vkAllocateMemory(vk->device, &ai, NULL, &b->mem);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(vk->device, b->buf, b->mem, 0);
  /* Forced staging (tests) leaves device buffers unmapped even where their memory is
   * host-visible, so that unified-memory devices take the discrete GPUs' copy paths. */
  if (r == VK_SUCCESS && (host || !vk->force_staging) &&
      (vk->mem_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    r = vkMapMemory(vk->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
  if (r != VK_SUCCESS) {
    if (b->mem) vkFreeMemory(vk->device, b->mem, NULL);
    vkDestroyBuffer(vk->device, b->buf, NULL);
    b->buf = VK_NULL_HANDLE;
    b->mem = VK_NULL_HANDLE;
    b->map = NULL;
    return sw_err_set(err, SW_EDEVICE, "allocating %llu bytes for buffer '%s' failed: %s",
                      (unsigned long long)size, b->label, vk_result_name(r));
  }
  b->size = size;
  return 0;
}

static void buf_free(struct gs_vk_buf *b) {
  if (b->map) vkUnmapMemory(b->vk->device, b->mem);
  if (b->buf) vkDestroyBuffer(b->vk->device, b->buf, NULL);
  if (b->mem) vkFreeMemory(b->vk->device, b->mem, NULL);
  b->buf = VK_NULL_HANDLE;
  b->mem = VK_NULL_HANDLE;
  b->map = NULL;
  b->size = 0;
}

int gs_vk_buf_new(gs_vk_t *vk, VkDeviceSize size, unsigned flags, const char *label,
                  struct gs_vk_buf **out, struct sw_err *err) {
  *out = NULL;
  struct gs_vk_buf *b = calloc(1, sizeof *b);
  if (!b) return sw_err_set(err, SW_ENOMEM, "out of memory");
  b->vk = vk;
  b->flags = flags;
  snprintf(b->label, sizeof b->label, "%s", label ? label : "buffer");
  if (size < 4) size = 4;
  size = (size + 3) & ~(VkDeviceSize)3;
  int rc = buf_alloc(vk, size, (flags & GS_VK_BUF_HOST) || !vk->staging, b, err);
  if (!rc && vk->poison) rc = gs_vk_buf_fill(b, vk->poison_word, err);
  if (rc) {
    buf_free(b);
    free(b);
    return rc;
  }
  *out = b;
  return 0;
}

void gs_vk_buf_destroy(struct gs_vk_buf **bp) {
  if (!bp || !*bp) return;
  buf_free(*bp);
  free(*bp);
  *bp = NULL;
}

int gs_vk_buf_reserve(struct gs_vk_buf *b, VkDeviceSize size, int *grown, struct sw_err *err) {
  if (grown) *grown = 0;
  if (size <= b->size) return 0;
  VkDeviceSize want = b->size + b->size / 2;
  if (want < size) want = size;
  want = (want + 3) & ~(VkDeviceSize)3;
  buf_free(b);
  int rc = buf_alloc(b->vk, want, (b->flags & GS_VK_BUF_HOST) || !b->vk->staging, b, err);
  if (!rc && b->vk->poison) rc = gs_vk_buf_fill(b, b->vk->poison_word, err);
  if (rc) return rc;
  if (grown) *grown = 1;
  return 0;
}

int gs_vk_buf_ensure(gs_vk_t *vk, struct gs_vk_buf **buf, VkDeviceSize size, unsigned flags,
                     const char *label, struct sw_err *err) {
  if (!*buf) return gs_vk_buf_new(vk, size, flags, label, buf, err);
  return gs_vk_buf_reserve(*buf, size, NULL, err);
}

int gs_vk_cmd_begin(gs_vk_t *vk, VkCommandBuffer *out, struct sw_err *err) {
  *out = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = vk->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(vk->device, &ai, out);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  r = vkBeginCommandBuffer(*out, &bi);
  if (r != VK_SUCCESS) {
    vkFreeCommandBuffers(vk->device, vk->pool, 1, out);
    *out = VK_NULL_HANDLE;
    return vkfail(err, r, "vkBeginCommandBuffer");
  }
  return 0;
}

void gs_vk_cmd_discard(gs_vk_t *vk, VkCommandBuffer *cmd) {
  if (!cmd || !*cmd) return;
  vkFreeCommandBuffers(vk->device, vk->pool, 1, cmd);
  *cmd = VK_NULL_HANDLE;
}

/* Ends cmd after a barrier into the host stage and submits it to signal fence. The host reads what
 * a submission wrote as soon as its fence signals (staging copies, the forward's pair count, loss
 * partial sums), but a fence's memory dependency covers device accesses only: without a barrier
 * into the host stage, device writes to host-visible memory are not guaranteed visible to the
 * host (Vulkan spec, "Fences"; discrete GPUs may still hold them in their caches). On failure the
 * command buffer is freed. */
static int end_and_submit(gs_vk_t *vk, VkCommandBuffer *cmd, VkFence fence, struct sw_err *err) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(*cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  VkResult r = vkEndCommandBuffer(*cmd);
  if (r != VK_SUCCESS) {
    gs_vk_cmd_discard(vk, cmd);
    return vkfail(err, r, "vkEndCommandBuffer");
  }
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = cmd};
  r = vkResetFences(vk->device, 1, &fence);
  if (r == VK_SUCCESS) r = vkQueueSubmit(vk->queue, 1, &si, fence);
  if (r != VK_SUCCESS) {
    gs_vk_cmd_discard(vk, cmd);
    return vkfail(err, r, "submitting GPU work");
  }
  return 0;
}

int gs_vk_cmd_submit_wait(gs_vk_t *vk, VkCommandBuffer *cmd, struct sw_err *err) {
  int rc = end_and_submit(vk, cmd, vk->fence, err);
  if (rc) return rc;
  VkResult r = vkWaitForFences(vk->device, 1, &vk->fence, VK_TRUE, UINT64_MAX);
  gs_vk_cmd_discard(vk, cmd);
  if (r != VK_SUCCESS) return vkfail(err, r, "waiting for GPU work");
  return 0;
}

/* ---- jobs: submissions the host waits for later ---- */

struct gs_vk_job {
  gs_vk_t *vk;
  VkFence fence;
  VkCommandBuffer cmd; /* submitted and not yet waited for (VK_NULL_HANDLE: none) */
};

int gs_vk_job_new(gs_vk_t *vk, gs_vk_job_t **out, struct sw_err *err) {
  *out = NULL;
  gs_vk_job_t *j = calloc(1, sizeof *j);
  if (!j) return sw_err_set(err, SW_ENOMEM, "out of memory");
  j->vk = vk;
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult r = vkCreateFence(vk->device, &fci, NULL, &j->fence);
  if (r != VK_SUCCESS) {
    free(j);
    return vkfail(err, r, "vkCreateFence");
  }
  *out = j;
  return 0;
}

int gs_vk_job_submit(gs_vk_job_t *j, VkCommandBuffer *cmd, struct sw_err *err) {
  if (j->cmd) {
    gs_vk_cmd_discard(j->vk, cmd);
    return sw_err_set(err, SW_EINVAL, "GPU job submitted again before it was waited for");
  }
  int rc = end_and_submit(j->vk, cmd, j->fence, err);
  if (rc) return rc;
  j->cmd = *cmd;
  *cmd = VK_NULL_HANDLE;
  return 0;
}

int gs_vk_job_pending(const gs_vk_job_t *j) { return j && j->cmd != VK_NULL_HANDLE; }

int gs_vk_job_wait(gs_vk_job_t *j, struct sw_err *err) {
  if (!j || !j->cmd) return 0;
  VkResult r = vkWaitForFences(j->vk->device, 1, &j->fence, VK_TRUE, UINT64_MAX);
  gs_vk_cmd_discard(j->vk, &j->cmd);
  if (r != VK_SUCCESS) return vkfail(err, r, "waiting for GPU work");
  return 0;
}

void gs_vk_job_destroy(gs_vk_job_t **jp) {
  if (!jp || !*jp) return;
  gs_vk_job_t *j = *jp;
  if (j->cmd) {
    (void)vkWaitForFences(j->vk->device, 1, &j->fence, VK_TRUE, UINT64_MAX);
    gs_vk_cmd_discard(j->vk, &j->cmd);
  }
  vkDestroyFence(j->vk->device, j->fence, NULL);
  free(j);
  *jp = NULL;
}

void gs_vk_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_INDIRECT_COMMAND_READ_BIT |
                                         VK_ACCESS_TRANSFER_READ_BIT |
                                         VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                           VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
}

static int check_range(const struct gs_vk_buf *b, VkDeviceSize off, VkDeviceSize size,
                       struct sw_err *err) {
  if (off > b->size || size > b->size - off)
    return sw_err_set(err, SW_EINVAL, "buffer '%s': range %llu+%llu exceeds its %llu bytes",
                      b->label, (unsigned long long)off, (unsigned long long)size,
                      (unsigned long long)b->size);
  return 0;
}

/* Pieces sit in the staging buffer at 256-byte boundaries (any device's copy alignment). */
static VkDeviceSize stage_span(VkDeviceSize size) { return (size + 255) & ~(VkDeviceSize)255; }

int gs_vk_buf_copy(gs_vk_t *vk, int upload, const struct gs_vk_copy *x, uint32_t n,
                   struct gs_vk_buf *zero, struct sw_err *err) {
  int mapped = 1;
  VkDeviceSize total = 0;
  for (uint32_t i = 0; i < n; i++) {
    int rc = check_range(x[i].buf, x[i].offset, x[i].size, err);
    if (rc) return rc;
    if (x[i].size && !x[i].buf->map) mapped = 0;
    total += stage_span(x[i].size);
  }
  if (mapped) {
    for (uint32_t i = 0; i < n; i++) {
      if (!x[i].size) continue;
      char *dev = (char *)x[i].buf->map + x[i].offset;
      if (upload)
        memcpy(dev, x[i].host, x[i].size);
      else
        memcpy(x[i].host, dev, x[i].size);
    }
    return zero ? gs_vk_buf_fill(zero, 0, err) : 0;
  }
  int rc = gs_vk_buf_ensure(vk, &vk->stage, total, GS_VK_BUF_HOST, "staging", err);
  if (rc) return rc;
  char *st = vk->stage->map;
  VkDeviceSize o = 0;
  for (uint32_t i = 0; i < n && upload; o += stage_span(x[i].size), i++)
    if (x[i].size) memcpy(st + o, x[i].host, x[i].size);
  VkCommandBuffer cmd;
  rc = gs_vk_cmd_begin(vk, &cmd, err);
  if (rc) return rc;
  o = 0;
  for (uint32_t i = 0; i < n; o += stage_span(x[i].size), i++) {
    if (!x[i].size) continue;
    VkBufferCopy c = {.srcOffset = upload ? o : x[i].offset,
                      .dstOffset = upload ? x[i].offset : o,
                      .size = x[i].size};
    vkCmdCopyBuffer(cmd, upload ? vk->stage->buf : x[i].buf->buf,
                    upload ? x[i].buf->buf : vk->stage->buf, 1, &c);
  }
  if (zero) vkCmdFillBuffer(cmd, zero->buf, 0, VK_WHOLE_SIZE, 0);
  rc = gs_vk_cmd_submit_wait(vk, &cmd, err);
  o = 0;
  for (uint32_t i = 0; i < n && !rc && !upload; o += stage_span(x[i].size), i++)
    if (x[i].size) memcpy(x[i].host, st + o, x[i].size);
  return rc;
}

int gs_vk_buf_upload(struct gs_vk_buf *b, VkDeviceSize offset, const void *data, VkDeviceSize size,
                     struct sw_err *err) {
  struct gs_vk_copy x = {b, offset, size, (void *)data};
  return gs_vk_buf_copy(b->vk, 1, &x, 1, NULL, err);
}

int gs_vk_buf_download(struct gs_vk_buf *b, VkDeviceSize offset, void *data, VkDeviceSize size,
                       struct sw_err *err) {
  struct gs_vk_copy x = {b, offset, size, data};
  return gs_vk_buf_copy(b->vk, 0, &x, 1, NULL, err);
}

int gs_vk_buf_fill(struct gs_vk_buf *b, uint32_t value, struct sw_err *err) {
  VkCommandBuffer cmd;
  int rc = gs_vk_cmd_begin(b->vk, &cmd, err);
  if (rc) return rc;
  vkCmdFillBuffer(cmd, b->buf, 0, VK_WHOLE_SIZE, value);
  return gs_vk_cmd_submit_wait(b->vk, &cmd, err);
}

/* ---- kernels ---- */

int gs_vk_kernel_new(gs_vk_t *vk, const struct gs_vk_kernel_desc *d, gs_vk_kernel_t **out,
                     struct sw_err *err) {
  *out = NULL;
  const char *name = d->name ? d->name : "kernel";
  if (!d->spirv || !d->spirv->words || d->spirv->size < 20 || d->spirv->size % 4)
    return sw_err_set(err, SW_EINVAL, "kernel '%s': no SPIR-V module", name);
  if (d->n_buffers > GS_VK_MAX_BINDINGS || d->n_spec > GS_VK_MAX_SPEC || d->push_size > 128 ||
      d->push_size % 4)
    return sw_err_set(err, SW_EINVAL,
                      "kernel '%s': %u buffers, %u constants, %u push bytes: "
                      "out of range",
                      name, d->n_buffers, d->n_spec, d->push_size);
  gs_vk_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return sw_err_set(err, SW_ENOMEM, "out of memory");
  k->vk = vk;
  snprintf(k->name, sizeof k->name, "%s", name);
  k->n_buffers = d->n_buffers;
  k->push_size = d->push_size;

  VkDescriptorSetLayoutBinding binds[GS_VK_MAX_BINDINGS];
  for (uint32_t i = 0; i < d->n_buffers; i++)
    binds[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo sl = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
      .bindingCount = d->n_buffers,
      .pBindings = binds};
  VkResult r = vkCreateDescriptorSetLayout(vk->device, &sl, NULL, &k->set_layout);
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = d->push_size};
  VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &k->set_layout,
                                   .pushConstantRangeCount = d->push_size ? 1 : 0,
                                   .pPushConstantRanges = &pr};
  if (r == VK_SUCCESS) r = vkCreatePipelineLayout(vk->device, &pl, NULL, &k->layout);
  VkShaderModule mod = VK_NULL_HANDLE;
  VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = d->spirv->size,
                                 .pCode = d->spirv->words};
  if (r == VK_SUCCESS) r = vkCreateShaderModule(vk->device, &mi, NULL, &mod);
  VkSpecializationMapEntry map[GS_VK_MAX_SPEC];
  for (uint32_t i = 0; i < d->n_spec; i++)
    map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
  VkSpecializationInfo spec = {.mapEntryCount = d->n_spec,
                               .pMapEntries = map,
                               .dataSize = 4 * (size_t)d->n_spec,
                               .pData = d->spec};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = mod,
                .pName = "main",
                .pSpecializationInfo = d->n_spec ? &spec : NULL},
      .layout = k->layout};
  if (r == VK_SUCCESS)
    r = vkCreateComputePipelines(vk->device, vk->cache, 1, &ci, NULL, &k->pipeline);
  if (mod) vkDestroyShaderModule(vk->device, mod, NULL);
  if (r != VK_SUCCESS) {
    gs_vk_kernel_destroy(&k);
    return sw_err_set(err, SW_EDEVICE, "building kernel '%s' (%s) failed: %s", name,
                      d->spirv->name ? d->spirv->name : "?", vk_result_name(r));
  }
  *out = k;
  return 0;
}

void gs_vk_kernel_destroy(gs_vk_kernel_t **kp) {
  if (!kp || !*kp) return;
  gs_vk_kernel_t *k = *kp;
  VkDevice dev = k->vk->device;
  if (k->pipeline) vkDestroyPipeline(dev, k->pipeline, NULL);
  if (k->layout) vkDestroyPipelineLayout(dev, k->layout, NULL);
  if (k->set_layout) vkDestroyDescriptorSetLayout(dev, k->set_layout, NULL);
  free(k);
  *kp = NULL;
}

const char *gs_vk_kernel_name(const gs_vk_kernel_t *k) { return k->name; }

int gs_vk_kernel_embedded(gs_vk_t *vk, const struct gs_spirv *(*lookup)(const char *stem),
                          const char *stem, const char *label, uint32_t n_buffers,
                          uint32_t push_size, const uint32_t *spec, uint32_t n_spec,
                          gs_vk_kernel_t **out, struct sw_err *err) {
  *out = NULL;
  const struct gs_spirv *code = lookup(stem);
  if (!code) return sw_err_set(err, SW_ENOTFOUND, "shader '%s' is not embedded", stem);
  struct gs_vk_kernel_desc d = {.name = label ? label : stem,
                                .spirv = code,
                                .n_buffers = n_buffers,
                                .push_size = push_size,
                                .spec = spec,
                                .n_spec = n_spec};
  return gs_vk_kernel_new(vk, &d, out, err);
}

void gs_vk_grid(uint64_t groups, uint32_t *gx, uint32_t *gy) {
  *gx = groups > 65535 ? 65535u : (uint32_t)groups;
  *gy = *gx ? (uint32_t)((groups + *gx - 1) / *gx) : 0;
}

static void bind(VkCommandBuffer cmd, const gs_vk_kernel_t *k, struct gs_vk_buf *const *bufs,
                 const void *push) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  VkDescriptorBufferInfo bi[GS_VK_MAX_BINDINGS];
  VkWriteDescriptorSet w[GS_VK_MAX_BINDINGS];
  for (uint32_t i = 0; i < k->n_buffers; i++) {
    bi[i] = (VkDescriptorBufferInfo){.buffer = bufs[i]->buf, .offset = 0, .range = VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstBinding = i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &bi[i]};
  }
  if (k->n_buffers)
    k->vk->push_descriptor(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, k->n_buffers, w);
  if (k->push_size && push)
    vkCmdPushConstants(cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_size, push);
}

void gs_vk_dispatch(VkCommandBuffer cmd, const gs_vk_kernel_t *k, struct gs_vk_buf *const *bufs,
                    const void *push, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (!gx || !gy || !gz) return;
  bind(cmd, k, bufs, push);
  vkCmdDispatch(cmd, gx, gy, gz);
}

void gs_vk_dispatch_indirect(VkCommandBuffer cmd, const gs_vk_kernel_t *k,
                             struct gs_vk_buf *const *bufs, const void *push,
                             const struct gs_vk_buf *args, VkDeviceSize offset) {
  bind(cmd, k, bufs, push);
  vkCmdDispatchIndirect(cmd, args->buf, offset);
}

/* ---- stage timer ---- */

struct timer_stage {
  struct gs_vk_stage_stats s;
};

struct gs_vk_timer {
  gs_vk_t *vk;
  VkQueryPool pool; /* sets x 2 max queries */
  uint32_t max;
  uint32_t sets, cur; /* query sets (one per submission in flight), the one in use */
  uint32_t bad_set;   /* 1 + a set asked of gs_vk_timer_use past `sets` (0: none): collect fails */
  uint32_t *used;     /* per set: begin/end pairs recorded in its current command buffer */
  int open;           /* a begin without its end */
  uint64_t dropped;
  char (*labels)[32]; /* per set and recorded pair */
  uint64_t *ts;       /* 2 * max */
  struct gs_vk_stage_stats *stats;
  uint32_t n_stats, cap_stats;
  double *iv; /* intervals of all collected stages, ms, for the busy union */
  double busy_ms;
  double span_ms; /* per submission, first stage's start to last stage's end, summed */
};

int gs_vk_timer_new_sets(gs_vk_t *vk, uint32_t max_stages, uint32_t sets, gs_vk_timer_t **out,
                         struct sw_err *err) {
  *out = NULL;
  if (!vk->info.timestamps)
    return sw_err_set(err, SW_EDEVICE, "device '%s' has no timestamp queries on its compute queue",
                      vk->info.name);
  if (max_stages == 0) max_stages = 1;
  if (sets == 0) sets = 1;
  gs_vk_timer_t *t = calloc(1, sizeof *t);
  if (!t) return sw_err_set(err, SW_ENOMEM, "out of memory");
  t->vk = vk;
  t->max = max_stages;
  t->sets = sets;
  t->used = calloc(sets, sizeof *t->used);
  t->labels = calloc((size_t)max_stages * sets, sizeof *t->labels);
  t->ts = calloc(2 * (size_t)max_stages, sizeof *t->ts);
  t->iv = calloc(2 * (size_t)max_stages, sizeof *t->iv);
  if (!t->used || !t->labels || !t->ts || !t->iv) {
    gs_vk_timer_destroy(&t);
    return sw_err_set(err, SW_ENOMEM, "out of memory");
  }
  VkQueryPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2 * max_stages * sets};
  VkResult r = vkCreateQueryPool(vk->device, &ci, NULL, &t->pool);
  if (r != VK_SUCCESS) {
    gs_vk_timer_destroy(&t);
    return vkfail(err, r, "vkCreateQueryPool");
  }
  *out = t;
  return 0;
}

int gs_vk_timer_new(gs_vk_t *vk, uint32_t max_stages, gs_vk_timer_t **out, struct sw_err *err) {
  return gs_vk_timer_new_sets(vk, max_stages, 1, out, err);
}

void gs_vk_timer_use(gs_vk_timer_t *t, uint32_t set) {
  /* Two submissions in flight on one set would reset each other's stamps before the host reads
   * them: a set the timer lacks is an error at the next collect, not a silent share. */
  if (set >= t->sets && !t->bad_set) t->bad_set = set + 1;
  t->cur = set < t->sets ? set : t->sets - 1;
  t->open = 0;
}

void gs_vk_timer_destroy(gs_vk_timer_t **tp) {
  if (!tp || !*tp) return;
  gs_vk_timer_t *t = *tp;
  if (t->pool) vkDestroyQueryPool(t->vk->device, t->pool, NULL);
  free(t->used);
  free(t->labels);
  free(t->ts);
  free(t->iv);
  free(t->stats);
  free(t);
  *tp = NULL;
}

/* First query of the set in use. */
static uint32_t set_base(const gs_vk_timer_t *t) { return 2 * t->max * t->cur; }

void gs_vk_timer_reset(gs_vk_timer_t *t, VkCommandBuffer cmd) {
  vkCmdResetQueryPool(cmd, t->pool, set_base(t), 2 * t->max);
  t->used[t->cur] = 0;
  t->open = 0;
}

void gs_vk_timer_begin(gs_vk_timer_t *t, VkCommandBuffer cmd, const char *label) {
  uint32_t u = t->used[t->cur];
  if (u >= t->max) {
    t->dropped++;
    t->open = 0;
    return;
  }
  snprintf(t->labels[(size_t)t->cur * t->max + u], sizeof t->labels[0], "%s", label);
  /* Bottom of pipe for the start too: the stamp waits for all earlier work, so a stage's interval
   * does not absorb the tail of the previous one (a top-of-pipe stamp may be taken early). */
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->pool, set_base(t) + 2 * u);
  t->open = 1;
}

void gs_vk_timer_end(gs_vk_timer_t *t, VkCommandBuffer cmd) {
  if (!t->open) return;
  uint32_t u = t->used[t->cur];
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->pool, set_base(t) + 2 * u + 1);
  t->used[t->cur] = u + 1;
  t->open = 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int gs_vk_timer_collect(gs_vk_timer_t *t, struct sw_err *err) {
  if (t->bad_set)
    return sw_err_set(err, SW_EINVAL,
                      "timer: query set %u used, but the timer has %u (gs_vk_timer_new_sets)",
                      t->bad_set - 1, t->sets);
  uint32_t used = t->used[t->cur];
  if (!used) return 0;
  const char(*labels)[32] = t->labels + (size_t)t->cur * t->max;
  VkResult r = vkGetQueryPoolResults(t->vk->device, t->pool, set_base(t), 2 * used,
                                     2 * used * sizeof(uint64_t), t->ts, sizeof(uint64_t),
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) return vkfail(err, r, "vkGetQueryPoolResults");
  double ns = t->vk->info.timestamp_period;
  uint64_t t0 = t->ts[0];
  for (uint32_t i = 0; i < 2 * used; i++)
    if (t->ts[i] < t0) t0 = t->ts[i];
  for (uint32_t i = 0; i < used; i++) {
    uint64_t a = t->ts[2 * i], b = t->ts[2 * i + 1];
    double ms = b > a ? (double)(b - a) * ns * 1e-6 : 0.0;
    uint32_t j = 0;
    while (j < t->n_stats && strcmp(t->stats[j].name, labels[i])) j++;
    if (j == t->n_stats) {
      if (t->n_stats == t->cap_stats) {
        uint32_t nc = t->cap_stats ? 2 * t->cap_stats : 16;
        struct gs_vk_stage_stats *ns2 = realloc(t->stats, nc * sizeof *ns2);
        if (!ns2) return sw_err_set(err, SW_ENOMEM, "out of memory");
        t->stats = ns2;
        t->cap_stats = nc;
      }
      memset(&t->stats[j], 0, sizeof t->stats[j]);
      snprintf(t->stats[j].name, sizeof t->stats[j].name, "%s", labels[i]);
      t->n_stats++;
    }
    t->stats[j].calls++;
    t->stats[j].gpu_ms += ms;
    t->iv[2 * i] = (double)(a - t0) * ns * 1e-6;
    t->iv[2 * i + 1] = t->iv[2 * i] + ms;
  }
  /* Busy time of this submission: the union of its stage intervals (sorted by start). */
  double *pairs = malloc(used * 2 * sizeof *pairs);
  if (!pairs) return sw_err_set(err, SW_ENOMEM, "out of memory");
  memcpy(pairs, t->iv, used * 2 * sizeof *pairs);
  qsort(pairs, used, 2 * sizeof *pairs, cmp_double);
  double cur_a = pairs[0], cur_b = pairs[1];
  for (uint32_t i = 1; i < used; i++) {
    if (pairs[2 * i] > cur_b) {
      t->busy_ms += cur_b - cur_a;
      cur_a = pairs[2 * i];
      cur_b = pairs[2 * i + 1];
    } else if (pairs[2 * i + 1] > cur_b) {
      cur_b = pairs[2 * i + 1];
    }
  }
  t->busy_ms += cur_b - cur_a;
  /* The submission's span: the merge above ends on the latest end (cur_b never decreases) and
   * the sorted intervals begin with the earliest start. */
  t->span_ms += cur_b - pairs[0];
  free(pairs);
  for (uint32_t j = 0; j < t->n_stats; j++)
    t->stats[j].share = t->busy_ms > 0 ? t->stats[j].gpu_ms / t->busy_ms : 0.0;
  t->used[t->cur] = 0;
  return 0;
}

void gs_vk_timer_summary(const gs_vk_timer_t *t, const struct gs_vk_stage_stats **stages,
                         uint32_t *n, double *busy_ms) {
  if (stages) *stages = t->stats;
  if (n) *n = t->n_stats;
  if (busy_ms) *busy_ms = t->busy_ms;
}

double gs_vk_timer_span_ms(const gs_vk_timer_t *t) { return t->span_ms; }

void gs_vk_timer_clear(gs_vk_timer_t *t) {
  t->n_stats = 0;
  t->busy_ms = 0;
  t->span_ms = 0;
  t->dropped = 0;
}
