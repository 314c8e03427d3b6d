/**
 * `mcp-task-client/receiver`: the receiver role of MCP 2025-11-25 tasks, in its own entry point so
 * that a host that serves no receiver tasks bundles none of it. `taskReceiver(options)` makes a
 * receiver; a TaskClient serves it when given it (`serve` option, `TaskClient.serve`). See
 * docs/receiver.md.
 */
import type { ServeOptions, TaskReceiver } from './api/index.js';
import { plugIn, servingRegistry } from './facade/input/receiver-seam.js';
import { mergeCapabilities } from './receiver/capabilities.js';
import { checkServeOptions, withClientCallbacks } from './receiver/options.js';
import { Receiver, cannotServe, capabilitiesFor } from './receiver/receiver.js';

/**
 * A receiver of the server's task-augmented `elicitation/create` and `sampling/createMessage`
 * requests: a TaskClient given it (the `serve` option of `new TaskClient` or `TaskClient.connect`,
 * or `TaskClient.serve`) answers each such request at once with a task of its own, runs the
 * callback in the background, and serves `tasks/get`, `tasks/result`, `tasks/list` and
 * `tasks/cancel` for those tasks. `TaskClient.connect` declares the capabilities it needs.
 * @param options - the callbacks (without either, the client's `onElicitation` / `onSampling`
 *   serve) and the limits.
 * @throws TaskOptionError naming the option (`serve.maxTtlMs`, …) for an invalid value.
 */
export function taskReceiver(options: ServeOptions = {}): TaskReceiver {
  const checked = checkServeOptions(options);
  return plugIn(
    { options: Object.freeze({ ...options }) },
    {
      configure: (callbacks) => {
        const config = withClientCallbacks(checked, callbacks);
        return {
          // Serving receiver tasks: each kind served, its task augmentation, tasks.list and tasks.cancel ([R1]).
          declare: (capabilities) => mergeCapabilities(capabilities, capabilitiesFor(config)),
          refusal: (port) => cannotServe(port, config, servingRegistry),
          start: (host, port) => {
            const receiver = new Receiver(config, host, servingRegistry, host.scheduler, () => host.now());
            receiver.attach(port);
            return receiver;
          },
          callbacks: { onElicitation: config.elicitation, onSampling: config.sampling },
        };
      },
    },
  );
}
