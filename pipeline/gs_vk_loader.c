/* gs_vk_loader.c: the Vulkan loader, opened at run time. Every Vulkan command
 * the pipeline calls is defined here as a small function that forwards to the
 * loader's entry point, found with dlopen / dlsym the first time
 * gs_vk_loader_open() succeeds. Nothing links libvulkan, so splat-train and
 * every tool start on machines without a Vulkan loader (their non-GPU
 * subcommands work), and a missing loader becomes a clear error that says what
 * to install instead of a failure of the dynamic linker.
 *
 * The forwarders were written from the prototypes in vulkan_core.h; a command
 * used by the pipeline and not listed here is a link error, never a silent
 * failure. Calling a forwarder before the loader is open is an API misuse
 * (gs_vk_open and gs_vk_list_devices open it first).
 *
 * The entry points are process-wide state by nature (like the dynamic
 * linker's): they are set once, under a mutex, and never change after. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_vk.h"

static PFN_vkAllocateCommandBuffers p_vkAllocateCommandBuffers;
static PFN_vkAllocateMemory p_vkAllocateMemory;
static PFN_vkBeginCommandBuffer p_vkBeginCommandBuffer;
static PFN_vkBindBufferMemory p_vkBindBufferMemory;
static PFN_vkCmdBindPipeline p_vkCmdBindPipeline;
static PFN_vkCmdCopyBuffer p_vkCmdCopyBuffer;
static PFN_vkCmdDispatch p_vkCmdDispatch;
static PFN_vkCmdDispatchIndirect p_vkCmdDispatchIndirect;
static PFN_vkCmdFillBuffer p_vkCmdFillBuffer;
static PFN_vkCmdPipelineBarrier p_vkCmdPipelineBarrier;
static PFN_vkCmdPushConstants p_vkCmdPushConstants;
static PFN_vkCmdResetQueryPool p_vkCmdResetQueryPool;
static PFN_vkCmdUpdateBuffer p_vkCmdUpdateBuffer;
static PFN_vkCmdWriteTimestamp p_vkCmdWriteTimestamp;
static PFN_vkCreateBuffer p_vkCreateBuffer;
static PFN_vkCreateCommandPool p_vkCreateCommandPool;
static PFN_vkCreateComputePipelines p_vkCreateComputePipelines;
static PFN_vkCreateDescriptorSetLayout p_vkCreateDescriptorSetLayout;
static PFN_vkCreateDevice p_vkCreateDevice;
static PFN_vkCreateFence p_vkCreateFence;
static PFN_vkCreateInstance p_vkCreateInstance;
static PFN_vkCreatePipelineCache p_vkCreatePipelineCache;
static PFN_vkCreatePipelineLayout p_vkCreatePipelineLayout;
static PFN_vkCreateQueryPool p_vkCreateQueryPool;
static PFN_vkCreateShaderModule p_vkCreateShaderModule;
static PFN_vkDestroyBuffer p_vkDestroyBuffer;
static PFN_vkDestroyCommandPool p_vkDestroyCommandPool;
static PFN_vkDestroyDescriptorSetLayout p_vkDestroyDescriptorSetLayout;
static PFN_vkDestroyDevice p_vkDestroyDevice;
static PFN_vkDestroyFence p_vkDestroyFence;
static PFN_vkDestroyInstance p_vkDestroyInstance;
static PFN_vkDestroyPipeline p_vkDestroyPipeline;
static PFN_vkDestroyPipelineCache p_vkDestroyPipelineCache;
static PFN_vkDestroyPipelineLayout p_vkDestroyPipelineLayout;
static PFN_vkDestroyQueryPool p_vkDestroyQueryPool;
static PFN_vkDestroyShaderModule p_vkDestroyShaderModule;
static PFN_vkDeviceWaitIdle p_vkDeviceWaitIdle;
static PFN_vkEndCommandBuffer p_vkEndCommandBuffer;
static PFN_vkEnumerateDeviceExtensionProperties p_vkEnumerateDeviceExtensionProperties;
static PFN_vkEnumerateInstanceExtensionProperties p_vkEnumerateInstanceExtensionProperties;
static PFN_vkEnumerateInstanceVersion p_vkEnumerateInstanceVersion;
static PFN_vkEnumeratePhysicalDevices p_vkEnumeratePhysicalDevices;
static PFN_vkFlushMappedMemoryRanges p_vkFlushMappedMemoryRanges;
static PFN_vkFreeCommandBuffers p_vkFreeCommandBuffers;
static PFN_vkFreeMemory p_vkFreeMemory;
static PFN_vkGetBufferMemoryRequirements p_vkGetBufferMemoryRequirements;
static PFN_vkGetDeviceProcAddr p_vkGetDeviceProcAddr;
static PFN_vkGetDeviceQueue p_vkGetDeviceQueue;
static PFN_vkGetInstanceProcAddr p_vkGetInstanceProcAddr;
static PFN_vkGetPhysicalDeviceFeatures2 p_vkGetPhysicalDeviceFeatures2;
static PFN_vkGetPhysicalDeviceMemoryProperties p_vkGetPhysicalDeviceMemoryProperties;
static PFN_vkGetPhysicalDeviceProperties p_vkGetPhysicalDeviceProperties;
static PFN_vkGetPhysicalDeviceProperties2 p_vkGetPhysicalDeviceProperties2;
static PFN_vkGetPhysicalDeviceQueueFamilyProperties p_vkGetPhysicalDeviceQueueFamilyProperties;
static PFN_vkGetPipelineCacheData p_vkGetPipelineCacheData;
static PFN_vkGetQueryPoolResults p_vkGetQueryPoolResults;
static PFN_vkInvalidateMappedMemoryRanges p_vkInvalidateMappedMemoryRanges;
static PFN_vkMapMemory p_vkMapMemory;
static PFN_vkQueueSubmit p_vkQueueSubmit;
static PFN_vkQueueWaitIdle p_vkQueueWaitIdle;
static PFN_vkResetCommandBuffer p_vkResetCommandBuffer;
static PFN_vkResetFences p_vkResetFences;
static PFN_vkUnmapMemory p_vkUnmapMemory;
static PFN_vkWaitForFences p_vkWaitForFences;

/* Library names to try, most specific first. */
static const char *const loader_names[] = {
#if defined(__APPLE__)
    "libvulkan.1.dylib",
    "libvulkan.dylib",
    "libMoltenVK.dylib",
    "/usr/local/lib/libvulkan.1.dylib",
    "/opt/homebrew/lib/libvulkan.1.dylib",
#else
    "libvulkan.so.1",
    "libvulkan.so",
#endif
};

static void *loader_handle;
static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

static int loader_open_locked(struct sw_err *err);

int gs_vk_loader_open(struct sw_err *err) {
  pthread_mutex_lock(&loader_lock);
  int rc = loader_handle ? 0 : loader_open_locked(err);
  pthread_mutex_unlock(&loader_lock);
  return rc;
}

static int loader_open_locked(struct sw_err *err) {
  const char *env = getenv("GS_VULKAN_LOADER");
  void *h = NULL;
  char tried[256] = "";
  if (env && *env) {
    h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    snprintf(tried, sizeof tried, "%s", env);
  }
  for (size_t i = 0; !h && !(env && *env) && i < sizeof loader_names / sizeof loader_names[0];
       i++) {
    h = dlopen(loader_names[i], RTLD_NOW | RTLD_LOCAL);
    size_t l = strlen(tried);
    snprintf(tried + l, sizeof tried - l, "%s%s", l ? ", " : "", loader_names[i]);
  }
  if (!h)
    return sw_err_set(err, SW_EDEVICE,
                      "no Vulkan loader found (tried %s): install libvulkan1 and a driver "
                      "(Debian/Ubuntu: apt install libvulkan1 mesa-vulkan-drivers), on macOS "
                      "vulkan-loader and molten-vk (Homebrew), or the NVIDIA driver",
                      tried);
  p_vkAllocateCommandBuffers = (PFN_vkAllocateCommandBuffers)dlsym(h, "vkAllocateCommandBuffers");
  p_vkAllocateMemory = (PFN_vkAllocateMemory)dlsym(h, "vkAllocateMemory");
  p_vkBeginCommandBuffer = (PFN_vkBeginCommandBuffer)dlsym(h, "vkBeginCommandBuffer");
  p_vkBindBufferMemory = (PFN_vkBindBufferMemory)dlsym(h, "vkBindBufferMemory");
  p_vkCmdBindPipeline = (PFN_vkCmdBindPipeline)dlsym(h, "vkCmdBindPipeline");
  p_vkCmdCopyBuffer = (PFN_vkCmdCopyBuffer)dlsym(h, "vkCmdCopyBuffer");
  p_vkCmdDispatch = (PFN_vkCmdDispatch)dlsym(h, "vkCmdDispatch");
  p_vkCmdDispatchIndirect = (PFN_vkCmdDispatchIndirect)dlsym(h, "vkCmdDispatchIndirect");
  p_vkCmdFillBuffer = (PFN_vkCmdFillBuffer)dlsym(h, "vkCmdFillBuffer");
  p_vkCmdPipelineBarrier = (PFN_vkCmdPipelineBarrier)dlsym(h, "vkCmdPipelineBarrier");
  p_vkCmdPushConstants = (PFN_vkCmdPushConstants)dlsym(h, "vkCmdPushConstants");
  p_vkCmdResetQueryPool = (PFN_vkCmdResetQueryPool)dlsym(h, "vkCmdResetQueryPool");
  p_vkCmdUpdateBuffer = (PFN_vkCmdUpdateBuffer)dlsym(h, "vkCmdUpdateBuffer");
  p_vkCmdWriteTimestamp = (PFN_vkCmdWriteTimestamp)dlsym(h, "vkCmdWriteTimestamp");
  p_vkCreateBuffer = (PFN_vkCreateBuffer)dlsym(h, "vkCreateBuffer");
  p_vkCreateCommandPool = (PFN_vkCreateCommandPool)dlsym(h, "vkCreateCommandPool");
  p_vkCreateComputePipelines = (PFN_vkCreateComputePipelines)dlsym(h, "vkCreateComputePipelines");
  p_vkCreateDescriptorSetLayout =
      (PFN_vkCreateDescriptorSetLayout)dlsym(h, "vkCreateDescriptorSetLayout");
  p_vkCreateDevice = (PFN_vkCreateDevice)dlsym(h, "vkCreateDevice");
  p_vkCreateFence = (PFN_vkCreateFence)dlsym(h, "vkCreateFence");
  p_vkCreateInstance = (PFN_vkCreateInstance)dlsym(h, "vkCreateInstance");
  p_vkCreatePipelineCache = (PFN_vkCreatePipelineCache)dlsym(h, "vkCreatePipelineCache");
  p_vkCreatePipelineLayout = (PFN_vkCreatePipelineLayout)dlsym(h, "vkCreatePipelineLayout");
  p_vkCreateQueryPool = (PFN_vkCreateQueryPool)dlsym(h, "vkCreateQueryPool");
  p_vkCreateShaderModule = (PFN_vkCreateShaderModule)dlsym(h, "vkCreateShaderModule");
  p_vkDestroyBuffer = (PFN_vkDestroyBuffer)dlsym(h, "vkDestroyBuffer");
  p_vkDestroyCommandPool = (PFN_vkDestroyCommandPool)dlsym(h, "vkDestroyCommandPool");
  p_vkDestroyDescriptorSetLayout =
      (PFN_vkDestroyDescriptorSetLayout)dlsym(h, "vkDestroyDescriptorSetLayout");
  p_vkDestroyDevice = (PFN_vkDestroyDevice)dlsym(h, "vkDestroyDevice");
  p_vkDestroyFence = (PFN_vkDestroyFence)dlsym(h, "vkDestroyFence");
  p_vkDestroyInstance = (PFN_vkDestroyInstance)dlsym(h, "vkDestroyInstance");
  p_vkDestroyPipeline = (PFN_vkDestroyPipeline)dlsym(h, "vkDestroyPipeline");
  p_vkDestroyPipelineCache = (PFN_vkDestroyPipelineCache)dlsym(h, "vkDestroyPipelineCache");
  p_vkDestroyPipelineLayout = (PFN_vkDestroyPipelineLayout)dlsym(h, "vkDestroyPipelineLayout");
  p_vkDestroyQueryPool = (PFN_vkDestroyQueryPool)dlsym(h, "vkDestroyQueryPool");
  p_vkDestroyShaderModule = (PFN_vkDestroyShaderModule)dlsym(h, "vkDestroyShaderModule");
  p_vkDeviceWaitIdle = (PFN_vkDeviceWaitIdle)dlsym(h, "vkDeviceWaitIdle");
  p_vkEndCommandBuffer = (PFN_vkEndCommandBuffer)dlsym(h, "vkEndCommandBuffer");
  p_vkEnumerateDeviceExtensionProperties =
      (PFN_vkEnumerateDeviceExtensionProperties)dlsym(h, "vkEnumerateDeviceExtensionProperties");
  p_vkEnumerateInstanceExtensionProperties = (PFN_vkEnumerateInstanceExtensionProperties)dlsym(
      h, "vkEnumerateInstanceExtensionProperties");
  p_vkEnumerateInstanceVersion =
      (PFN_vkEnumerateInstanceVersion)dlsym(h, "vkEnumerateInstanceVersion");
  p_vkEnumeratePhysicalDevices =
      (PFN_vkEnumeratePhysicalDevices)dlsym(h, "vkEnumeratePhysicalDevices");
  p_vkFlushMappedMemoryRanges =
      (PFN_vkFlushMappedMemoryRanges)dlsym(h, "vkFlushMappedMemoryRanges");
  p_vkFreeCommandBuffers = (PFN_vkFreeCommandBuffers)dlsym(h, "vkFreeCommandBuffers");
  p_vkFreeMemory = (PFN_vkFreeMemory)dlsym(h, "vkFreeMemory");
  p_vkGetBufferMemoryRequirements =
      (PFN_vkGetBufferMemoryRequirements)dlsym(h, "vkGetBufferMemoryRequirements");
  p_vkGetDeviceProcAddr = (PFN_vkGetDeviceProcAddr)dlsym(h, "vkGetDeviceProcAddr");
  p_vkGetDeviceQueue = (PFN_vkGetDeviceQueue)dlsym(h, "vkGetDeviceQueue");
  p_vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(h, "vkGetInstanceProcAddr");
  p_vkGetPhysicalDeviceFeatures2 =
      (PFN_vkGetPhysicalDeviceFeatures2)dlsym(h, "vkGetPhysicalDeviceFeatures2");
  p_vkGetPhysicalDeviceMemoryProperties =
      (PFN_vkGetPhysicalDeviceMemoryProperties)dlsym(h, "vkGetPhysicalDeviceMemoryProperties");
  p_vkGetPhysicalDeviceProperties =
      (PFN_vkGetPhysicalDeviceProperties)dlsym(h, "vkGetPhysicalDeviceProperties");
  p_vkGetPhysicalDeviceProperties2 =
      (PFN_vkGetPhysicalDeviceProperties2)dlsym(h, "vkGetPhysicalDeviceProperties2");
  p_vkGetPhysicalDeviceQueueFamilyProperties = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)dlsym(
      h, "vkGetPhysicalDeviceQueueFamilyProperties");
  p_vkGetPipelineCacheData = (PFN_vkGetPipelineCacheData)dlsym(h, "vkGetPipelineCacheData");
  p_vkGetQueryPoolResults = (PFN_vkGetQueryPoolResults)dlsym(h, "vkGetQueryPoolResults");
  p_vkInvalidateMappedMemoryRanges =
      (PFN_vkInvalidateMappedMemoryRanges)dlsym(h, "vkInvalidateMappedMemoryRanges");
  p_vkMapMemory = (PFN_vkMapMemory)dlsym(h, "vkMapMemory");
  p_vkQueueSubmit = (PFN_vkQueueSubmit)dlsym(h, "vkQueueSubmit");
  p_vkQueueWaitIdle = (PFN_vkQueueWaitIdle)dlsym(h, "vkQueueWaitIdle");
  p_vkResetCommandBuffer = (PFN_vkResetCommandBuffer)dlsym(h, "vkResetCommandBuffer");
  p_vkResetFences = (PFN_vkResetFences)dlsym(h, "vkResetFences");
  p_vkUnmapMemory = (PFN_vkUnmapMemory)dlsym(h, "vkUnmapMemory");
  p_vkWaitForFences = (PFN_vkWaitForFences)dlsym(h, "vkWaitForFences");
  /* Commands of Vulkan 1.0 and 1.1 must all be there; a loader without them is
   * too old. */
  const char *missing = NULL;
  if (!p_vkAllocateCommandBuffers && !missing) missing = "vkAllocateCommandBuffers";
  if (!p_vkAllocateMemory && !missing) missing = "vkAllocateMemory";
  if (!p_vkBeginCommandBuffer && !missing) missing = "vkBeginCommandBuffer";
  if (!p_vkBindBufferMemory && !missing) missing = "vkBindBufferMemory";
  if (!p_vkCmdBindPipeline && !missing) missing = "vkCmdBindPipeline";
  if (!p_vkCmdCopyBuffer && !missing) missing = "vkCmdCopyBuffer";
  if (!p_vkCmdDispatch && !missing) missing = "vkCmdDispatch";
  if (!p_vkCmdDispatchIndirect && !missing) missing = "vkCmdDispatchIndirect";
  if (!p_vkCmdFillBuffer && !missing) missing = "vkCmdFillBuffer";
  if (!p_vkCmdPipelineBarrier && !missing) missing = "vkCmdPipelineBarrier";
  if (!p_vkCmdPushConstants && !missing) missing = "vkCmdPushConstants";
  if (!p_vkCmdResetQueryPool && !missing) missing = "vkCmdResetQueryPool";
  if (!p_vkCmdUpdateBuffer && !missing) missing = "vkCmdUpdateBuffer";
  if (!p_vkCmdWriteTimestamp && !missing) missing = "vkCmdWriteTimestamp";
  if (!p_vkCreateBuffer && !missing) missing = "vkCreateBuffer";
  if (!p_vkCreateCommandPool && !missing) missing = "vkCreateCommandPool";
  if (!p_vkCreateComputePipelines && !missing) missing = "vkCreateComputePipelines";
  if (!p_vkCreateDescriptorSetLayout && !missing) missing = "vkCreateDescriptorSetLayout";
  if (!p_vkCreateDevice && !missing) missing = "vkCreateDevice";
  if (!p_vkCreateFence && !missing) missing = "vkCreateFence";
  if (!p_vkCreateInstance && !missing) missing = "vkCreateInstance";
  if (!p_vkCreatePipelineCache && !missing) missing = "vkCreatePipelineCache";
  if (!p_vkCreatePipelineLayout && !missing) missing = "vkCreatePipelineLayout";
  if (!p_vkCreateQueryPool && !missing) missing = "vkCreateQueryPool";
  if (!p_vkCreateShaderModule && !missing) missing = "vkCreateShaderModule";
  if (!p_vkDestroyBuffer && !missing) missing = "vkDestroyBuffer";
  if (!p_vkDestroyCommandPool && !missing) missing = "vkDestroyCommandPool";
  if (!p_vkDestroyDescriptorSetLayout && !missing) missing = "vkDestroyDescriptorSetLayout";
  if (!p_vkDestroyDevice && !missing) missing = "vkDestroyDevice";
  if (!p_vkDestroyFence && !missing) missing = "vkDestroyFence";
  if (!p_vkDestroyInstance && !missing) missing = "vkDestroyInstance";
  if (!p_vkDestroyPipeline && !missing) missing = "vkDestroyPipeline";
  if (!p_vkDestroyPipelineCache && !missing) missing = "vkDestroyPipelineCache";
  if (!p_vkDestroyPipelineLayout && !missing) missing = "vkDestroyPipelineLayout";
  if (!p_vkDestroyQueryPool && !missing) missing = "vkDestroyQueryPool";
  if (!p_vkDestroyShaderModule && !missing) missing = "vkDestroyShaderModule";
  if (!p_vkDeviceWaitIdle && !missing) missing = "vkDeviceWaitIdle";
  if (!p_vkEndCommandBuffer && !missing) missing = "vkEndCommandBuffer";
  if (!p_vkEnumerateDeviceExtensionProperties && !missing)
    missing = "vkEnumerateDeviceExtensionProperties";
  if (!p_vkEnumerateInstanceExtensionProperties && !missing)
    missing = "vkEnumerateInstanceExtensionProperties";
  if (!p_vkEnumerateInstanceVersion && !missing) missing = "vkEnumerateInstanceVersion";
  if (!p_vkEnumeratePhysicalDevices && !missing) missing = "vkEnumeratePhysicalDevices";
  if (!p_vkFlushMappedMemoryRanges && !missing) missing = "vkFlushMappedMemoryRanges";
  if (!p_vkFreeCommandBuffers && !missing) missing = "vkFreeCommandBuffers";
  if (!p_vkFreeMemory && !missing) missing = "vkFreeMemory";
  if (!p_vkGetBufferMemoryRequirements && !missing) missing = "vkGetBufferMemoryRequirements";
  if (!p_vkGetDeviceProcAddr && !missing) missing = "vkGetDeviceProcAddr";
  if (!p_vkGetDeviceQueue && !missing) missing = "vkGetDeviceQueue";
  if (!p_vkGetInstanceProcAddr && !missing) missing = "vkGetInstanceProcAddr";
  if (!p_vkGetPhysicalDeviceFeatures2 && !missing) missing = "vkGetPhysicalDeviceFeatures2";
  if (!p_vkGetPhysicalDeviceMemoryProperties && !missing)
    missing = "vkGetPhysicalDeviceMemoryProperties";
  if (!p_vkGetPhysicalDeviceProperties && !missing) missing = "vkGetPhysicalDeviceProperties";
  if (!p_vkGetPhysicalDeviceProperties2 && !missing) missing = "vkGetPhysicalDeviceProperties2";
  if (!p_vkGetPhysicalDeviceQueueFamilyProperties && !missing)
    missing = "vkGetPhysicalDeviceQueueFamilyProperties";
  if (!p_vkGetPipelineCacheData && !missing) missing = "vkGetPipelineCacheData";
  if (!p_vkGetQueryPoolResults && !missing) missing = "vkGetQueryPoolResults";
  if (!p_vkInvalidateMappedMemoryRanges && !missing) missing = "vkInvalidateMappedMemoryRanges";
  if (!p_vkMapMemory && !missing) missing = "vkMapMemory";
  if (!p_vkQueueSubmit && !missing) missing = "vkQueueSubmit";
  if (!p_vkQueueWaitIdle && !missing) missing = "vkQueueWaitIdle";
  if (!p_vkResetCommandBuffer && !missing) missing = "vkResetCommandBuffer";
  if (!p_vkResetFences && !missing) missing = "vkResetFences";
  if (!p_vkUnmapMemory && !missing) missing = "vkUnmapMemory";
  if (!p_vkWaitForFences && !missing) missing = "vkWaitForFences";
  if (missing) {
    dlclose(h);
    return sw_err_set(err, SW_EDEVICE,
                      "the Vulkan loader lacks %s: it is older than Vulkan 1.1; "
                      "update libvulkan1 / vulkan-loader",
                      missing);
  }
  loader_handle = h;
  return 0;
}

VKAPI_ATTR VkResult VKAPI_CALL
vkAllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo *pAllocateInfo,
                         VkCommandBuffer *pCommandBuffers) {
  return p_vkAllocateCommandBuffers(device, pAllocateInfo, pCommandBuffers);
}
VKAPI_ATTR VkResult VKAPI_CALL vkAllocateMemory(VkDevice device,
                                                const VkMemoryAllocateInfo *pAllocateInfo,
                                                const VkAllocationCallbacks *pAllocator,
                                                VkDeviceMemory *pMemory) {
  return p_vkAllocateMemory(device, pAllocateInfo, pAllocator, pMemory);
}
VKAPI_ATTR VkResult VKAPI_CALL vkBeginCommandBuffer(VkCommandBuffer commandBuffer,
                                                    const VkCommandBufferBeginInfo *pBeginInfo) {
  return p_vkBeginCommandBuffer(commandBuffer, pBeginInfo);
}
VKAPI_ATTR VkResult VKAPI_CALL vkBindBufferMemory(VkDevice device, VkBuffer buffer,
                                                  VkDeviceMemory memory,
                                                  VkDeviceSize memoryOffset) {
  return p_vkBindBufferMemory(device, buffer, memory, memoryOffset);
}
VKAPI_ATTR void VKAPI_CALL vkCmdBindPipeline(VkCommandBuffer commandBuffer,
                                             VkPipelineBindPoint pipelineBindPoint,
                                             VkPipeline pipeline) {
  p_vkCmdBindPipeline(commandBuffer, pipelineBindPoint, pipeline);
}
VKAPI_ATTR void VKAPI_CALL vkCmdCopyBuffer(VkCommandBuffer commandBuffer, VkBuffer srcBuffer,
                                           VkBuffer dstBuffer, uint32_t regionCount,
                                           const VkBufferCopy *pRegions) {
  p_vkCmdCopyBuffer(commandBuffer, srcBuffer, dstBuffer, regionCount, pRegions);
}
VKAPI_ATTR void VKAPI_CALL vkCmdDispatch(VkCommandBuffer commandBuffer, uint32_t groupCountX,
                                         uint32_t groupCountY, uint32_t groupCountZ) {
  p_vkCmdDispatch(commandBuffer, groupCountX, groupCountY, groupCountZ);
}
VKAPI_ATTR void VKAPI_CALL vkCmdDispatchIndirect(VkCommandBuffer commandBuffer, VkBuffer buffer,
                                                 VkDeviceSize offset) {
  p_vkCmdDispatchIndirect(commandBuffer, buffer, offset);
}
VKAPI_ATTR void VKAPI_CALL vkCmdFillBuffer(VkCommandBuffer commandBuffer, VkBuffer dstBuffer,
                                           VkDeviceSize dstOffset, VkDeviceSize size,
                                           uint32_t data) {
  p_vkCmdFillBuffer(commandBuffer, dstBuffer, dstOffset, size, data);
}
VKAPI_ATTR void VKAPI_CALL vkCmdPipelineBarrier(
    VkCommandBuffer commandBuffer, VkPipelineStageFlags srcStageMask,
    VkPipelineStageFlags dstStageMask, VkDependencyFlags dependencyFlags,
    uint32_t memoryBarrierCount, const VkMemoryBarrier *pMemoryBarriers,
    uint32_t bufferMemoryBarrierCount, const VkBufferMemoryBarrier *pBufferMemoryBarriers,
    uint32_t imageMemoryBarrierCount, const VkImageMemoryBarrier *pImageMemoryBarriers) {
  p_vkCmdPipelineBarrier(commandBuffer, srcStageMask, dstStageMask, dependencyFlags,
                         memoryBarrierCount, pMemoryBarriers, bufferMemoryBarrierCount,
                         pBufferMemoryBarriers, imageMemoryBarrierCount, pImageMemoryBarriers);
}
VKAPI_ATTR void VKAPI_CALL vkCmdPushConstants(VkCommandBuffer commandBuffer,
                                              VkPipelineLayout layout,
                                              VkShaderStageFlags stageFlags, uint32_t offset,
                                              uint32_t size, const void *pValues) {
  p_vkCmdPushConstants(commandBuffer, layout, stageFlags, offset, size, pValues);
}
VKAPI_ATTR void VKAPI_CALL vkCmdResetQueryPool(VkCommandBuffer commandBuffer, VkQueryPool queryPool,
                                               uint32_t firstQuery, uint32_t queryCount) {
  p_vkCmdResetQueryPool(commandBuffer, queryPool, firstQuery, queryCount);
}
VKAPI_ATTR void VKAPI_CALL vkCmdUpdateBuffer(VkCommandBuffer commandBuffer, VkBuffer dstBuffer,
                                             VkDeviceSize dstOffset, VkDeviceSize dataSize,
                                             const void *pData) {
  p_vkCmdUpdateBuffer(commandBuffer, dstBuffer, dstOffset, dataSize, pData);
}
VKAPI_ATTR void VKAPI_CALL vkCmdWriteTimestamp(VkCommandBuffer commandBuffer,
                                               VkPipelineStageFlagBits pipelineStage,
                                               VkQueryPool queryPool, uint32_t query) {
  p_vkCmdWriteTimestamp(commandBuffer, pipelineStage, queryPool, query);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateBuffer(VkDevice device,
                                              const VkBufferCreateInfo *pCreateInfo,
                                              const VkAllocationCallbacks *pAllocator,
                                              VkBuffer *pBuffer) {
  return p_vkCreateBuffer(device, pCreateInfo, pAllocator, pBuffer);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateCommandPool(VkDevice device,
                                                   const VkCommandPoolCreateInfo *pCreateInfo,
                                                   const VkAllocationCallbacks *pAllocator,
                                                   VkCommandPool *pCommandPool) {
  return p_vkCreateCommandPool(device, pCreateInfo, pAllocator, pCommandPool);
}
VKAPI_ATTR VkResult VKAPI_CALL
vkCreateComputePipelines(VkDevice device, VkPipelineCache pipelineCache, uint32_t createInfoCount,
                         const VkComputePipelineCreateInfo *pCreateInfos,
                         const VkAllocationCallbacks *pAllocator, VkPipeline *pPipelines) {
  return p_vkCreateComputePipelines(device, pipelineCache, createInfoCount, pCreateInfos,
                                    pAllocator, pPipelines);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateDescriptorSetLayout(
    VkDevice device, const VkDescriptorSetLayoutCreateInfo *pCreateInfo,
    const VkAllocationCallbacks *pAllocator, VkDescriptorSetLayout *pSetLayout) {
  return p_vkCreateDescriptorSetLayout(device, pCreateInfo, pAllocator, pSetLayout);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateDevice(VkPhysicalDevice physicalDevice,
                                              const VkDeviceCreateInfo *pCreateInfo,
                                              const VkAllocationCallbacks *pAllocator,
                                              VkDevice *pDevice) {
  return p_vkCreateDevice(physicalDevice, pCreateInfo, pAllocator, pDevice);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateFence(VkDevice device, const VkFenceCreateInfo *pCreateInfo,
                                             const VkAllocationCallbacks *pAllocator,
                                             VkFence *pFence) {
  return p_vkCreateFence(device, pCreateInfo, pAllocator, pFence);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateInstance(const VkInstanceCreateInfo *pCreateInfo,
                                                const VkAllocationCallbacks *pAllocator,
                                                VkInstance *pInstance) {
  return p_vkCreateInstance(pCreateInfo, pAllocator, pInstance);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreatePipelineCache(VkDevice device,
                                                     const VkPipelineCacheCreateInfo *pCreateInfo,
                                                     const VkAllocationCallbacks *pAllocator,
                                                     VkPipelineCache *pPipelineCache) {
  return p_vkCreatePipelineCache(device, pCreateInfo, pAllocator, pPipelineCache);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreatePipelineLayout(VkDevice device,
                                                      const VkPipelineLayoutCreateInfo *pCreateInfo,
                                                      const VkAllocationCallbacks *pAllocator,
                                                      VkPipelineLayout *pPipelineLayout) {
  return p_vkCreatePipelineLayout(device, pCreateInfo, pAllocator, pPipelineLayout);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateQueryPool(VkDevice device,
                                                 const VkQueryPoolCreateInfo *pCreateInfo,
                                                 const VkAllocationCallbacks *pAllocator,
                                                 VkQueryPool *pQueryPool) {
  return p_vkCreateQueryPool(device, pCreateInfo, pAllocator, pQueryPool);
}
VKAPI_ATTR VkResult VKAPI_CALL vkCreateShaderModule(VkDevice device,
                                                    const VkShaderModuleCreateInfo *pCreateInfo,
                                                    const VkAllocationCallbacks *pAllocator,
                                                    VkShaderModule *pShaderModule) {
  return p_vkCreateShaderModule(device, pCreateInfo, pAllocator, pShaderModule);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyBuffer(VkDevice device, VkBuffer buffer,
                                           const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyBuffer(device, buffer, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyCommandPool(VkDevice device, VkCommandPool commandPool,
                                                const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyCommandPool(device, commandPool, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyDescriptorSetLayout(VkDevice device,
                                                        VkDescriptorSetLayout descriptorSetLayout,
                                                        const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyDescriptorSetLayout(device, descriptorSetLayout, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyDevice(VkDevice device,
                                           const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyDevice(device, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyFence(VkDevice device, VkFence fence,
                                          const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyFence(device, fence, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyInstance(VkInstance instance,
                                             const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyInstance(instance, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyPipeline(VkDevice device, VkPipeline pipeline,
                                             const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyPipeline(device, pipeline, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyPipelineCache(VkDevice device, VkPipelineCache pipelineCache,
                                                  const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyPipelineCache(device, pipelineCache, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyPipelineLayout(VkDevice device, VkPipelineLayout pipelineLayout,
                                                   const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyPipelineLayout(device, pipelineLayout, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyQueryPool(VkDevice device, VkQueryPool queryPool,
                                              const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyQueryPool(device, queryPool, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkDestroyShaderModule(VkDevice device, VkShaderModule shaderModule,
                                                 const VkAllocationCallbacks *pAllocator) {
  p_vkDestroyShaderModule(device, shaderModule, pAllocator);
}
VKAPI_ATTR VkResult VKAPI_CALL vkDeviceWaitIdle(VkDevice device) {
  return p_vkDeviceWaitIdle(device);
}
VKAPI_ATTR VkResult VKAPI_CALL vkEndCommandBuffer(VkCommandBuffer commandBuffer) {
  return p_vkEndCommandBuffer(commandBuffer);
}
VKAPI_ATTR VkResult VKAPI_CALL
vkEnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice, const char *pLayerName,
                                     uint32_t *pPropertyCount, VkExtensionProperties *pProperties) {
  return p_vkEnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pPropertyCount,
                                                pProperties);
}
VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceExtensionProperties(
    const char *pLayerName, uint32_t *pPropertyCount, VkExtensionProperties *pProperties) {
  return p_vkEnumerateInstanceExtensionProperties(pLayerName, pPropertyCount, pProperties);
}
VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceVersion(uint32_t *pApiVersion) {
  return p_vkEnumerateInstanceVersion(pApiVersion);
}
VKAPI_ATTR VkResult VKAPI_CALL vkEnumeratePhysicalDevices(VkInstance instance,
                                                          uint32_t *pPhysicalDeviceCount,
                                                          VkPhysicalDevice *pPhysicalDevices) {
  return p_vkEnumeratePhysicalDevices(instance, pPhysicalDeviceCount, pPhysicalDevices);
}
VKAPI_ATTR VkResult VKAPI_CALL vkFlushMappedMemoryRanges(VkDevice device, uint32_t memoryRangeCount,
                                                         const VkMappedMemoryRange *pMemoryRanges) {
  return p_vkFlushMappedMemoryRanges(device, memoryRangeCount, pMemoryRanges);
}
VKAPI_ATTR void VKAPI_CALL vkFreeCommandBuffers(VkDevice device, VkCommandPool commandPool,
                                                uint32_t commandBufferCount,
                                                const VkCommandBuffer *pCommandBuffers) {
  p_vkFreeCommandBuffers(device, commandPool, commandBufferCount, pCommandBuffers);
}
VKAPI_ATTR void VKAPI_CALL vkFreeMemory(VkDevice device, VkDeviceMemory memory,
                                        const VkAllocationCallbacks *pAllocator) {
  p_vkFreeMemory(device, memory, pAllocator);
}
VKAPI_ATTR void VKAPI_CALL vkGetBufferMemoryRequirements(
    VkDevice device, VkBuffer buffer, VkMemoryRequirements *pMemoryRequirements) {
  p_vkGetBufferMemoryRequirements(device, buffer, pMemoryRequirements);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char *pName) {
  return p_vkGetDeviceProcAddr(device, pName);
}
VKAPI_ATTR void VKAPI_CALL vkGetDeviceQueue(VkDevice device, uint32_t queueFamilyIndex,
                                            uint32_t queueIndex, VkQueue *pQueue) {
  p_vkGetDeviceQueue(device, queueFamilyIndex, queueIndex, pQueue);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                               const char *pName) {
  return p_vkGetInstanceProcAddr(instance, pName);
}
VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceFeatures2(VkPhysicalDevice physicalDevice,
                                                        VkPhysicalDeviceFeatures2 *pFeatures) {
  p_vkGetPhysicalDeviceFeatures2(physicalDevice, pFeatures);
}
VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceMemoryProperties(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties *pMemoryProperties) {
  p_vkGetPhysicalDeviceMemoryProperties(physicalDevice, pMemoryProperties);
}
VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceProperties(VkPhysicalDevice physicalDevice,
                                                         VkPhysicalDeviceProperties *pProperties) {
  p_vkGetPhysicalDeviceProperties(physicalDevice, pProperties);
}
VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceProperties2(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceProperties2 *pProperties) {
  p_vkGetPhysicalDeviceProperties2(physicalDevice, pProperties);
}
VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceQueueFamilyProperties(
    VkPhysicalDevice physicalDevice, uint32_t *pQueueFamilyPropertyCount,
    VkQueueFamilyProperties *pQueueFamilyProperties) {
  p_vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice, pQueueFamilyPropertyCount,
                                             pQueueFamilyProperties);
}
VKAPI_ATTR VkResult VKAPI_CALL vkGetPipelineCacheData(VkDevice device,
                                                      VkPipelineCache pipelineCache,
                                                      size_t *pDataSize, void *pData) {
  return p_vkGetPipelineCacheData(device, pipelineCache, pDataSize, pData);
}
VKAPI_ATTR VkResult VKAPI_CALL vkGetQueryPoolResults(VkDevice device, VkQueryPool queryPool,
                                                     uint32_t firstQuery, uint32_t queryCount,
                                                     size_t dataSize, void *pData,
                                                     VkDeviceSize stride,
                                                     VkQueryResultFlags flags) {
  return p_vkGetQueryPoolResults(device, queryPool, firstQuery, queryCount, dataSize, pData, stride,
                                 flags);
}
VKAPI_ATTR VkResult VKAPI_CALL vkInvalidateMappedMemoryRanges(
    VkDevice device, uint32_t memoryRangeCount, const VkMappedMemoryRange *pMemoryRanges) {
  return p_vkInvalidateMappedMemoryRanges(device, memoryRangeCount, pMemoryRanges);
}
VKAPI_ATTR VkResult VKAPI_CALL vkMapMemory(VkDevice device, VkDeviceMemory memory,
                                           VkDeviceSize offset, VkDeviceSize size,
                                           VkMemoryMapFlags flags, void **ppData) {
  return p_vkMapMemory(device, memory, offset, size, flags, ppData);
}
VKAPI_ATTR VkResult VKAPI_CALL vkQueueSubmit(VkQueue queue, uint32_t submitCount,
                                             const VkSubmitInfo *pSubmits, VkFence fence) {
  return p_vkQueueSubmit(queue, submitCount, pSubmits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL vkQueueWaitIdle(VkQueue queue) { return p_vkQueueWaitIdle(queue); }
VKAPI_ATTR VkResult VKAPI_CALL vkResetCommandBuffer(VkCommandBuffer commandBuffer,
                                                    VkCommandBufferResetFlags flags) {
  return p_vkResetCommandBuffer(commandBuffer, flags);
}
VKAPI_ATTR VkResult VKAPI_CALL vkResetFences(VkDevice device, uint32_t fenceCount,
                                             const VkFence *pFences) {
  return p_vkResetFences(device, fenceCount, pFences);
}
VKAPI_ATTR void VKAPI_CALL vkUnmapMemory(VkDevice device, VkDeviceMemory memory) {
  p_vkUnmapMemory(device, memory);
}
VKAPI_ATTR VkResult VKAPI_CALL vkWaitForFences(VkDevice device, uint32_t fenceCount,
                                               const VkFence *pFences, VkBool32 waitAll,
                                               uint64_t timeout) {
  return p_vkWaitForFences(device, fenceCount, pFences, waitAll, timeout);
}
