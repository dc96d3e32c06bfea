import Docker from "dockerode";

/** The image environments use by default (EnvironmentConfig.image), built by infra/sandbox-image.sh. */
export const SANDBOX_IMAGE = "wakeloop-sandbox:bookworm";

const SETUP = "bash infra/docker-engine.sh && bash infra/sandbox-image.sh";

/**
 * Fails with the fix when the Docker engine or the sandbox image is missing: tests that need sandboxes
 * never skip, they say how to make the machine ready.
 */
export async function requireDocker(docker = new Docker()): Promise<Docker> {
  try {
    await docker.ping();
  } catch {
    throw new Error(`Docker is not reachable. Start it and build the sandbox image with: ${SETUP}`);
  }
  try {
    await docker.getImage(SANDBOX_IMAGE).inspect();
  } catch {
    throw new Error(`The image ${SANDBOX_IMAGE} is missing. Build it with: ${SETUP}`);
  }
  return docker;
}

/** The sandbox image with Chromium, for the browser tools (`bash infra/sandbox-image.sh browser`). */
export const BROWSER_SANDBOX_IMAGE = "wakeloop-sandbox-browser:bookworm";

/** Fails with the fix when the browser image is missing (after the checks of requireDocker). */
export async function requireBrowserImage(docker = new Docker()): Promise<Docker> {
  await requireDocker(docker);
  try {
    await docker.getImage(BROWSER_SANDBOX_IMAGE).inspect();
  } catch {
    throw new Error(
      `The image ${BROWSER_SANDBOX_IMAGE} is missing. Build it with: bash infra/sandbox-image.sh browser`,
    );
  }
  return docker;
}

const labelFilter = (labels: Record<string, string>) =>
  JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });

/** Containers, running or not, that carry every one of `labels`. */
export function labelledContainers(
  docker: Docker,
  labels: Record<string, string>,
): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: labelFilter(labels) });
}

/** Names of the volumes that carry every one of `labels`. */
export async function labelledVolumes(docker: Docker, labels: Record<string, string>): Promise<string[]> {
  const { Volumes } = await docker.listVolumes({ filters: labelFilter(labels) });
  return (Volumes ?? []).map((volume) => volume.Name);
}

/** Removes the containers, then the volumes, that carry every one of `labels` (a test's own objects). */
export async function removeLabelled(docker: Docker, labels: Record<string, string>): Promise<void> {
  for (const info of await labelledContainers(docker, labels)) {
    await docker
      .getContainer(info.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
  for (const name of await labelledVolumes(docker, labels)) {
    await docker
      .getVolume(name)
      .remove()
      .catch(() => undefined);
  }
}
