// Types of odetensor/worker (worker.mjs): solves in a Worker.
import type { DosingModel, EventRecords, LaneStats, SolveOptions } from './index.js';

/** A result tensor: column-major data, strides in elements. */
export declare class ResultTensor {
  readonly data: Float64Array;
  readonly shape: number[];
  readonly strides: number[];
  readonly ndim: number;
  get(i: number, j?: number, k?: number): number;
}

/** What a worker solve sends: the problem's inputs (its callbacks live in
 * the model module). */
export interface WorkerInputs {
  y0?: ArrayLike<number>;
  params?: ArrayLike<number>;
  tEval?: ArrayLike<number>;
  finalTime?: number;
  stops?: ArrayLike<number> | ArrayLike<number>[];
  starts?: ArrayLike<number>;
  options?: SolveOptions;
  loss?: { data: ArrayLike<number>; weights?: ArrayLike<number> };
  /** solveDoses*: the event table and how the model takes doses. */
  records?: EventRecords;
  compartments?: number;
  cmtState?: readonly number[];
  dosing?: DosingModel;
}

/** A solve's results, copied out of wasm memory in the worker and
 * transferred (buffers moved, not copied). */
export interface WorkerResult {
  readonly nbatch: number;
  readonly ok: boolean;
  readonly nfailed: number;
  readonly status: string[];
  readonly statusCode: Int32Array;
  readonly message: string[];
  readonly count: Int32Array;
  readonly rootIndex: Int32Array;
  readonly rootTime: Float64Array;
  readonly stats: LaneStats[];
  /** Every solve has its times and outputs. */
  readonly ts: ResultTensor;
  readonly ys: ResultTensor;
  readonly sens: ResultTensor[];
  readonly events: {
    times: ResultTensor; roots: ResultTensor; before: ResultTensor; after: ResultTensor;
    count: Int32Array;
  } | null;
  readonly loss: ResultTensor | null;
  readonly gradParams: ResultTensor | null;
  readonly gradY0: ResultTensor | null;
}

export interface WorkerSolveOptions {
  /** done of total lanes, as the worker reports them. */
  onProgress?: (done: number, total: number) => void;
}

export declare class SolverWorker {
  run(kind: 'solveDense' | 'solve' | 'solveFwdSens' | 'solveAdjoint' | 'solveDoses' | 'solveDosesFwdSens'
    | 'solveDosesAdjoint', inputs: WorkerInputs,
    opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveDense(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solve(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveFwdSens(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveAdjoint(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveDoses(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveDosesFwdSens(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  solveDosesAdjoint(inputs: WorkerInputs, opts?: WorkerSolveOptions): Promise<WorkerResult>;
  /** Whether cancel() keeps the running solve's results (a shared flag). */
  readonly canCancel: boolean;
  /** Stops the running solve and every solve asked before this call (their
   * unfinished lanes: 'OT_ERR_CANCELLED', results kept); solves asked later
   * run. Without a shared flag: terminate(). */
  cancel(): void;
  terminate(): void;
}

/** Starts a worker for the model module at modelUrl, whose default export
 * is { nstates, nparams, rhs, ... } (the problem's sizes and callbacks). */
export declare function createSolverWorker(modelUrl: URL | string): Promise<SolverWorker>;
