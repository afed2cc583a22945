// Types of the CommonJS entry (index.cjs); the API types are index.d.ts's
// (an ES module, hence resolution-mode: TypeScript >= 5.3).
import type { LoadOptions, OdeTensor, OdeTensorError } from './index.js' with { 'resolution-mode': 'import' };

export type {
  NumericArray, CallbackResult, RhsFunction, JacFunction, DfdpFunction, InitFunction, OutFunction, RootFunction,
  SolveOptions, Problem, DenseProblem, StepsProblem, DLDataType, DLDevice, Tensor, LaneStats,
  StatusName, Solution, SensSolution, LossFunction, IntegrandFunction, AdjointProblem,
  AdjointSolution, EventRecords, DosingModel, DoseProblem, DoseAdjointProblem, RecordsInfo,
  OdeTensor, LoadOptions,
} from './index.js' with { 'resolution-mode': 'import' };

/** Loads the wasm module; the same instance as the ES module's load(). */
export declare function load(options?: LoadOptions): Promise<OdeTensor>;
/** Resolves to the OdeTensorError class (for instanceof checks). */
export declare function errorClass(): Promise<typeof OdeTensorError>;
