// Not part of the quick start: what the test drives from Chromium, for the lookup of the quick start's CouponCheck.tsx.
import { lookup } from '../src/CouponCheck.tsx';
import { installTestHook } from './testHook.js';

installTestHook(lookup);
