// How the harness's own clients are recorded: each on wire stream `client:<name>`, with a note
// when the script is over. Its own module: the reports and checkers read these names without
// loading the clients themselves.

export const clientStream = (name: string): string => `client:${name}`;
/** The journal's note on each client's stream when the script is over (what it had read by then is its backlog's yardstick). */
export const SCENE_OVER_NOTE = 'scene over';
