// The types of benchParts.mjs (the bench's parts, each on its own), for the tests.
export interface PartRow {
  figure: string;
  ours: number | null;
  unit: string;
  budget: string;
  pass: boolean;
  note?: string;
}
export interface Parts {
  failed: string[];
  seconds: Record<string, number>;
  run(name: string, fn: () => Promise<unknown>): Promise<void>;
  unhandled(error: unknown): void;
}
export declare const partFigure: (name: string) => string;
export declare function createParts(options: {
  row: (r: PartRow) => void;
  log: (...m: unknown[]) => void;
  boundS?: number;
}): Parts;
