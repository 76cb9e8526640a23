-- Argo CD health check for every kind of monitoring.uptime-operator.io.
-- It reads what kstatus (sigs.k8s.io/cli-utils) reads, so Argo CD and Flux
-- agree: Progressing until the controller has observed the generation or
-- while Reconciling is True, Degraded while Stalled is True (a missing
-- Secret, region or referenced object, a taken slug, a refused probe
-- Deployment), Progressing while Ready is not True, else Healthy.
-- See docs/gitops.md; controllers/gitops_test.go runs it.
local hs = {}
local status = obj.status
local generation = obj.metadata.generation
if status ~= nil and status.observedGeneration ~= nil and generation ~= nil
    and status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "waiting for the controller to observe generation " .. generation
  return hs
end
local function describe(c)
  return (c.reason or "") .. ": " .. (c.message or "")
end
local ready = nil
if status ~= nil and status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do
    if c.type == "Reconciling" and c.status == "True" then
      hs.status = "Progressing"
      hs.message = describe(c)
      return hs
    end
    if c.type == "Stalled" and c.status == "True" then
      hs.status = "Degraded"
      hs.message = describe(c)
      return hs
    end
    if c.type == "Ready" then
      ready = c
    end
  end
end
if ready ~= nil and ready.status ~= "True" then
  hs.status = "Progressing"
  hs.message = describe(ready)
  return hs
end
hs.status = "Healthy"
if ready ~= nil then
  hs.message = ready.message
end
return hs
